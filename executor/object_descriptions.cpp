#include "executor/object_descriptions.hpp"

#include <atomic>

namespace tally::executor {
namespace {

// Read by any session's thread, hence atomic.
std::atomic<std::shared_ptr<const ObjectDescriptions>>& installed() {
  static std::atomic<std::shared_ptr<const ObjectDescriptions>> descriptions;
  return descriptions;
}

}  // namespace

void install_object_descriptions(std::shared_ptr<const ObjectDescriptions> descriptions) {
  installed().store(std::move(descriptions));
}

std::shared_ptr<const ObjectDescriptions> object_descriptions() { return installed().load(); }

}  // namespace tally::executor
