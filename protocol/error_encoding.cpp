#include "protocol/error_encoding.hpp"

#include "protocol/backend_messages.hpp"

namespace tally::protocol {

std::vector<std::pair<char, std::string>> error_fields(const Error& error) {
  std::vector<std::pair<char, std::string>> fields;
  std::string severity(severity_name(error.severity()));
  fields.emplace_back('S', severity);  // localized severity; Tally speaks English only
  fields.emplace_back('V', severity);
  fields.emplace_back('C', std::string(sqlstate_code(error.state())));
  fields.emplace_back('M', error.what());
  if (!error.detail().empty()) fields.emplace_back('D', error.detail());
  if (!error.hint().empty()) fields.emplace_back('H', error.hint());
  if (error.position() > 0) fields.emplace_back('P', std::to_string(error.position()));
  if (!error.context().empty()) fields.emplace_back('W', error.context());
  return fields;
}

bool is_error_severity(Severity severity) {
  return severity == Severity::error || severity == Severity::fatal || severity == Severity::panic;
}

void encode_error(const Error& error, std::string& out) {
  if (is_error_severity(error.severity())) {
    backend::encode(backend::ErrorResponse{error_fields(error)}, out);
  } else {
    backend::encode(backend::NoticeResponse{error_fields(error)}, out);
  }
}

}  // namespace tally::protocol
