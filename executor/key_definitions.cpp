#include "executor/key_definitions.hpp"

#include <atomic>

namespace tally::executor {
namespace {

// Read by any session's thread, hence atomic.
std::atomic<std::shared_ptr<const KeyDefinitions>>& installed() {
  static std::atomic<std::shared_ptr<const KeyDefinitions>> definitions;
  return definitions;
}

}  // namespace

void install_key_definitions(std::shared_ptr<const KeyDefinitions> definitions) {
  installed().store(std::move(definitions));
}

std::shared_ptr<const KeyDefinitions> key_definitions() { return installed().load(); }

}  // namespace tally::executor
