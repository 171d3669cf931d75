#pragma once
// Polls a condition that another thread (a server, a session) makes true,
// instead of sleeping a guessed time: true as soon as it holds, false when it
// still does not after `limit`.
#include <chrono>
#include <thread>

namespace tally::testing {

template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return predicate();
}

}  // namespace tally::testing
