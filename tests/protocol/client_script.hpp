#pragma once
// Client bytes for scripted sessions (tests and the fuzzer's seeds), encoded
// with the project's own codec so that every script is well formed.
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "protocol/frontend_messages.hpp"

namespace tally::protocol::testing {

// A v3 StartupMessage with user, database and application_name, then `extra`.
inline std::string startup_packet(const std::string& user, const std::string& database,
                                  const std::string& application_name,
                                  std::vector<std::pair<std::string, std::string>> extra = {}) {
  frontend::StartupMessage m;
  m.parameters = {{"user", user}, {"database", database}, {"application_name", application_name}};
  m.parameters.insert(m.parameters.end(), extra.begin(), extra.end());
  return frontend::encode_startup_packet(m);
}

// The messages, encoded back to back (pipelined, as drivers send them).
inline std::string encode_messages(std::initializer_list<frontend::Message> messages) {
  std::string out;
  for (const auto& m : messages) out += frontend::encode(m);
  return out;
}

}  // namespace tally::protocol::testing
