#include "common/error.hpp"

namespace tally {

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::error: return "ERROR";
    case Severity::fatal: return "FATAL";
    case Severity::panic: return "PANIC";
    case Severity::warning: return "WARNING";
    case Severity::notice: return "NOTICE";
    case Severity::debug: return "DEBUG";
    case Severity::info: return "INFO";
    case Severity::log: return "LOG";
  }
  return "ERROR";
}

}  // namespace tally
