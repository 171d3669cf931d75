#pragma once
// The error of a configuration that cannot start tallyd. It lists every bad
// value at once, each line naming the setting and where it came from
// ("tally.toml:12", "--port", "TALLY_PORT"), so one start-up attempt is enough
// to learn everything that is wrong. tallyd prints what() and exits with 2.
#include <stdexcept>
#include <string>
#include <vector>

namespace tally::config {

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> problems)
      : std::runtime_error(join(problems)), problems_(std::move(problems)) {}

  const std::vector<std::string>& problems() const { return problems_; }

 private:
  static std::string join(const std::vector<std::string>& problems) {
    std::string text = "invalid configuration:";
    for (const auto& p : problems) text += "\n  " + p;
    return text;
  }
  std::vector<std::string> problems_;
};

}  // namespace tally::config
