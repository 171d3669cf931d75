#pragma once
// One error type for everything that ends a statement or a session. It carries
// the fields of a PostgreSQL ErrorResponse/NoticeResponse; protocol/ encodes it.
#include <stdexcept>
#include <string>

#include "common/sqlstate.hpp"

namespace tally {

enum class Severity { error, fatal, panic, warning, notice, debug, info, log };

// The non-localized severity word ('V' field) PostgreSQL sends.
std::string_view severity_name(Severity severity);

class Error : public std::runtime_error {
 public:
  Error(SqlState state, std::string message, Severity severity = Severity::error)
      : std::runtime_error(message), state_(state), severity_(severity) {}

  SqlState state() const { return state_; }
  Severity severity() const { return severity_; }
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }
  const std::string& context() const { return context_; }
  // 1-based character position in the statement text, 0 when absent ('P' field).
  int position() const { return position_; }

  Error& with_detail(std::string detail) { detail_ = std::move(detail); return *this; }
  Error& with_hint(std::string hint) { hint_ = std::move(hint); return *this; }
  Error& with_context(std::string context) { context_ = std::move(context); return *this; }
  Error& with_position(int position) { position_ = position; return *this; }
  Error& with_severity(Severity severity) { severity_ = severity; return *this; }

 private:
  SqlState state_;
  Severity severity_;
  std::string detail_;
  std::string hint_;
  std::string context_;
  int position_ = 0;
};

}  // namespace tally
