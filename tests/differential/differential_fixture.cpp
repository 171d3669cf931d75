#include "tests/differential/differential_fixture.hpp"

#include <gtest/gtest.h>

namespace tally::testing {

uint64_t differential_option(const char* flag, const char* env, uint64_t fallback) {
  const std::string prefix = std::string(flag) + "=";
  for (const auto& arg : ::testing::internal::GetArgvs()) {
    if (arg.rfind(prefix, 0) == 0) return std::stoull(arg.substr(prefix.size()));
  }
  if (const char* value = std::getenv(env)) return std::stoull(value);
  return fallback;
}

}  // namespace tally::testing
