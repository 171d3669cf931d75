#include "executor/view_definitions.hpp"

#include <atomic>

namespace tally::executor {
namespace {

// Read by any session's thread, hence atomic.
std::atomic<std::shared_ptr<const ViewDefinitions>>& installed() {
  static std::atomic<std::shared_ptr<const ViewDefinitions>> definitions;
  return definitions;
}

}  // namespace

void install_view_definitions(std::shared_ptr<const ViewDefinitions> definitions) {
  installed().store(std::move(definitions));
}

std::shared_ptr<const ViewDefinitions> view_definitions() { return installed().load(); }

}  // namespace tally::executor
