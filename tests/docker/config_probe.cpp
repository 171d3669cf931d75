// Stands in for tallyd in the entrypoint test: loads the configuration exactly
// as tallyd does (flags + TALLY_* environment) and prints the outcome.
#include <iostream>

#include "config/config_loader.hpp"

extern char** environ;

int main(int argc, char** argv) {
  using namespace tally::config;
  try {
    LoadResult r = load_config(argc, argv, environment_map(environ));
    for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
    std::cout << (r.action == LoadAction::exit_ok ? r.output : render_config(r));
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
