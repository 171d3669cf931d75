#pragma once
// The executor's one door to value rendering and parsing: PostgreSQL 15's text
// output, binary send, text input and binary receive of executor Values. Every
// result cell and every parameter goes through these functions, so switching
// their implementation (to executor/types/) is a change in one file.
#include <string>
#include <string_view>

#include "common/sql_type.hpp"
#include "executor/value.hpp"

namespace tally::executor {

// Appends the text form of row i (not NULL) of v.
void append_text(std::string& out, const Vector& v, size_t i);
// Appends the binary (send) form of row i (not NULL) of v.
void append_binary(std::string& out, const Vector& v, size_t i);
// Text form of a non-NULL value of the given type.
std::string value_to_text(SqlType type, const Value& value);
void append_value_text(std::string& out, SqlType type, const Value& value);

// Text input function of `type` (casts from text and unknown literals).
// Throws 22P02 / 22003 / 22007 / 22008 as PostgreSQL's input functions do.
Value parse_text(SqlType type, std::string_view text);
// Binary receive of a parameter. Throws 22P03 on a malformed value.
Value parse_binary(SqlType type, std::string_view bytes);

// Calendar helpers: days since 2000-01-01 <-> civil date (year <= 0 is BC).
int32_t days_from_civil(int year, int month, int day);
void civil_from_days(int32_t days, int& year, int& month, int& day);

// PostgreSQL's shortest round-trip float text (extra_float_digits = 1).
void append_float(std::string& out, double value, bool is_float4);

}  // namespace tally::executor
