#pragma once
// The one function that turns an Error into ErrorResponse/NoticeResponse
// fields, in PostgreSQL's field order (S V C M D H P W).
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace tally::protocol {

std::vector<std::pair<char, std::string>> error_fields(const Error& error);

// True for severities sent as ErrorResponse; the rest are NoticeResponse.
bool is_error_severity(Severity severity);

// Appends the framed ErrorResponse ('E') or NoticeResponse ('N').
void encode_error(const Error& error, std::string& out);

}  // namespace tally::protocol
