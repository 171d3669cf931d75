// Text/binary I/O of every storable type. Expected strings, SQLSTATEs and
// messages were obtained from PostgreSQL 15.x (psql against a scratch server).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "executor/types/type_io.hpp"

using namespace tally;
using namespace tally::types;

namespace {

template <class F>
std::string out_of(F f) {
  std::string s;
  f(s);
  return s;
}

std::string f8(double v) { return out_of([&](std::string& s) { append_float8(s, v); }); }
std::string f4(float v) { return out_of([&](std::string& s) { append_float4(s, v); }); }
std::string num(int64_t v, int scale) { return out_of([&](std::string& s) { append_numeric(s, v, scale); }); }
std::string date_text(int32_t d) { return out_of([&](std::string& s) { append_date(s, d); }); }
std::string ts_text(int64_t t) { return out_of([&](std::string& s) { append_timestamp(s, t); }); }
std::string time_text(int64_t t) { return out_of([&](std::string& s) { append_time(s, t); }); }
std::string bytea_text(std::string_view b) { return out_of([&](std::string& s) { append_bytea(s, b); }); }

// Runs f, expecting an Error with the given SQLSTATE and message.
template <class F>
void expect_error(F f, SqlState state, const std::string& message, const std::string& detail = "") {
  try {
    f();
    FAIL() << "expected error: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(sqlstate_code(e.state()), sqlstate_code(state)) << e.what();
    EXPECT_EQ(e.what(), message);
    if (!detail.empty()) {
      EXPECT_EQ(e.detail(), detail);
    }
  }
}

}  // namespace

TEST(TypeIo, Float8Output) {
  EXPECT_EQ(f8(1e20), "1e+20");
  EXPECT_EQ(f8(1.5e-7), "1.5e-07");
  EXPECT_EQ(f8(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(f8(1e16), "1e+16");
  EXPECT_EQ(f8(1e15), "1e+15");
  EXPECT_EQ(f8(123456789012345.0), "123456789012345");
  EXPECT_EQ(f8(1e-4), "0.0001");
  EXPECT_EQ(f8(1e-5), "1e-05");
  EXPECT_EQ(f8(0.1), "0.1");
  EXPECT_EQ(f8(-2.5), "-2.5");
  EXPECT_EQ(f8(100), "100");
  EXPECT_EQ(f8(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(f8(-0.0), "-0");
  EXPECT_EQ(f8(4e-320), "4e-320");
  EXPECT_EQ(f8(1e100), "1e+100");
  EXPECT_EQ(f8(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(f8(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(f8(std::nan("")), "NaN");
}

TEST(TypeIo, Float4Output) {
  EXPECT_EQ(f4(0.1f), "0.1");
  EXPECT_EQ(f4(123456.f), "123456");
  EXPECT_EQ(f4(1234567.f), "1.234567e+06");
  EXPECT_EQ(f4(1e-5f), "1e-05");
  EXPECT_EQ(f4(0.0001f), "0.0001");
  EXPECT_EQ(f4(3.4e38f), "3.4e+38");
  EXPECT_EQ(f4(1e-45f), "1e-45");
  // Ties with a neighbour: PostgreSQL prints more digits (checked against PG 15).
  EXPECT_EQ(f4(-101903904.f), "-1.01903904e+08");
  EXPECT_EQ(f4(51777448.f), "5.1777448e+07");
  EXPECT_EQ(f4(16777216.f), "1.6777216e+07");
  EXPECT_EQ(f4(1e10f), "1e+10");
}

TEST(TypeIo, FloatInput) {
  EXPECT_EQ(parse_float8(" 1.5 "), 1.5);
  EXPECT_EQ(parse_float8("+2e3"), 2000);
  EXPECT_TRUE(std::isinf(parse_float8("-Infinity")));
  EXPECT_TRUE(std::isinf(parse_float8("inf")));
  EXPECT_TRUE(std::isnan(parse_float8("NaN")));
  EXPECT_EQ(parse_float8("4e-320"), 4e-320);
  EXPECT_EQ(parse_float4("0.1"), 0.1f);
  expect_error([] { parse_float8("1e-400"); }, SqlState::numeric_value_out_of_range,
               "\"1e-400\" is out of range for type double precision");
  expect_error([] { parse_float4("1e39"); }, SqlState::numeric_value_out_of_range,
               "\"1e39\" is out of range for type real");
  expect_error([] { parse_float4("1e-46"); }, SqlState::numeric_value_out_of_range,
               "\"1e-46\" is out of range for type real");
  expect_error([] { parse_float8("abc"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type double precision: \"abc\"");
  expect_error([] { parse_float8(""); }, SqlState::invalid_text_representation,
               "invalid input syntax for type double precision: \"\"");
  expect_error([] { parse_float8("1.5x"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type double precision: \"1.5x\"");
}

TEST(TypeIo, IntegerInput) {
  EXPECT_EQ(parse_int4(" 12 "), 12);
  EXPECT_EQ(parse_int4("+12"), 12);
  EXPECT_EQ(parse_int4("-2147483648"), INT32_MIN);
  EXPECT_EQ(parse_int8("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(parse_int8("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(parse_int2("-32768"), -32768);
  expect_error([] { parse_int4("1.5"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type integer: \"1.5\"");
  expect_error([] { parse_int4("abc"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type integer: \"abc\"");
  expect_error([] { parse_int4(""); }, SqlState::invalid_text_representation,
               "invalid input syntax for type integer: \"\"");
  expect_error([] { parse_int4("99999999999"); }, SqlState::numeric_value_out_of_range,
               "value \"99999999999\" is out of range for type integer");
  expect_error([] { parse_int4("2147483648"); }, SqlState::numeric_value_out_of_range,
               "value \"2147483648\" is out of range for type integer");
  expect_error([] { parse_int2("99999999999"); }, SqlState::numeric_value_out_of_range,
               "value \"99999999999\" is out of range for type smallint");
  expect_error([] { parse_int8("9223372036854775808"); }, SqlState::numeric_value_out_of_range,
               "value \"9223372036854775808\" is out of range for type bigint");
}

TEST(TypeIo, BooleanInput) {
  EXPECT_TRUE(parse_bool("yes"));
  EXPECT_FALSE(parse_bool("of"));
  EXPECT_TRUE(parse_bool(" TRUE "));
  EXPECT_TRUE(parse_bool("t"));
  EXPECT_FALSE(parse_bool("0"));
  EXPECT_TRUE(parse_bool("on"));
  expect_error([] { parse_bool("o"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type boolean: \"o\"");
  expect_error([] { parse_bool("truex"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type boolean: \"truex\"");
}

TEST(TypeIo, Numeric) {
  EXPECT_EQ(num(12345, 2), "123.45");
  EXPECT_EQ(num(-5, 2), "-0.05");
  EXPECT_EQ(num(0, 2), "0.00");
  EXPECT_EQ(num(7, 0), "7");
  EXPECT_EQ(parse_numeric("-0.001", 5, 2), 0);
  EXPECT_EQ(parse_numeric("-0.005", 5, 2), -1);
  EXPECT_EQ(parse_numeric("1e2", 5, 2), 10000);
  EXPECT_EQ(parse_numeric(".5", 3, 1), 5);
  EXPECT_EQ(parse_numeric("5.", 3, 1), 50);
  EXPECT_EQ(parse_numeric("0.5", 1, 1), 5);
  EXPECT_EQ(parse_numeric(" 999.994 ", 5, 2), 99999);
  EXPECT_EQ(parse_numeric("0.00000000000000000000000000000000000000000000012", 5, 2), 0);
  EXPECT_EQ(parse_numeric("123456789012345678", 18, 0), 123456789012345678);
  expect_error([] { parse_numeric("999.995", 5, 2); }, SqlState::numeric_value_out_of_range,
               "numeric field overflow",
               "A field with precision 5, scale 2 must round to an absolute value less than 10^3.");
  expect_error([] { parse_numeric("1.5", 2, 2); }, SqlState::numeric_value_out_of_range,
               "numeric field overflow",
               "A field with precision 2, scale 2 must round to an absolute value less than 1.");
  expect_error([] { parse_numeric("Infinity", 5, 2); }, SqlState::numeric_value_out_of_range,
               "numeric field overflow", "A field with precision 5, scale 2 cannot hold an infinite value.");
  expect_error([] { parse_numeric("x", 5, 2); }, SqlState::invalid_text_representation,
               "invalid input syntax for type numeric: \"x\"");
  expect_error([] { parse_numeric(".", 5, 2); }, SqlState::invalid_text_representation,
               "invalid input syntax for type numeric: \".\"");
}

TEST(TypeIo, NumericBinary) {
  // numeric_send of 123.45::numeric(5,2): ndigits 2, weight 0, sign 0, dscale 2, digits 123, 4500.
  std::string b;
  send_numeric(b, int64_t{12345}, 2);
  EXPECT_EQ(b, std::string("\x00\x02\x00\x00\x00\x00\x00\x02\x00\x7b\x11\x94", 12));
  EXPECT_EQ(recv_numeric(b, 5, 2), 12345);
  b.clear();
  send_numeric(b, int64_t{-100000000}, 0);  // -100000000: one digit 1 at weight 2
  EXPECT_EQ(b, std::string("\x00\x01\x00\x02\x40\x00\x00\x00\x00\x01", 10));
  EXPECT_EQ(recv_numeric(b, 10, 0), -100000000);
  b.clear();
  send_numeric(b, int64_t{0}, 3);
  EXPECT_EQ(b, std::string("\x00\x00\x00\x00\x00\x00\x00\x03", 8));
  b.clear();
  send_numeric(b, int64_t{5}, 3);  // 0.005: digit 50 at weight -1
  EXPECT_EQ(b, std::string("\x00\x01\xff\xff\x00\x00\x00\x03\x00\x32", 10));
  EXPECT_EQ(recv_numeric(b, 4, 3), 5);
  EXPECT_EQ(recv_numeric(b, 4, 2), 1);  // rounds half away from zero
}

// numeric wider than int64: numeric(19..38,s) and unconstrained numeric.
std::string wide(const NumericValue& n) { return out_of([&](std::string& s) { append_numeric(s, n.mantissa, n.scale); }); }

std::string hex_bytes(const std::string& b) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : b) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

TEST(TypeIo, UnconstrainedNumericKeepsEveryWrittenDigit) {
  // Display scales as PostgreSQL 15's numeric_in gives them.
  EXPECT_EQ(wide(parse_numeric_any("1.50")), "1.50");
  EXPECT_EQ(parse_numeric_any("1.50").scale, 2);
  EXPECT_EQ(wide(parse_numeric_any("1.5e3")), "1500");
  EXPECT_EQ(wide(parse_numeric_any("2.50e-3")), "0.00250");
  EXPECT_EQ(wide(parse_numeric_any(" -0.000 ")), "0.000");
  EXPECT_EQ(wide(parse_numeric_any("1e-30")), "0.000000000000000000000000000001");
  EXPECT_EQ(wide(parse_numeric_any("123456789012345678901234567890.123456")), "123456789012345678901234567890.123456");
  EXPECT_EQ(wide(parse_numeric_any("-99999999999999999999999999999999999999")), "-99999999999999999999999999999999999999");
  EXPECT_EQ(wide(parse_numeric_any("0000000000000000000000000000000000000000000000001.25")), "1.25");
  expect_error([] { parse_numeric_any("123456789012345678901234567890123456789"); }, SqlState::feature_not_supported,
               "numeric values with more than 38 significant digits are not supported by Tally");
  expect_error([] { parse_numeric_any("1e38"); }, SqlState::feature_not_supported,
               "numeric values with more than 38 significant digits are not supported by Tally");
  expect_error([] { parse_numeric_any("abc"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type numeric: \"abc\"");
  expect_error([] { parse_numeric_any("1e1001"); }, SqlState::invalid_text_representation,
               "invalid input syntax for type numeric: \"1e1001\"");
}

TEST(TypeIo, Numeric128WithPrecisionUpTo38) {
  const __int128 v = parse_numeric128("12345678901234567890123456.7891", 30, 4);
  EXPECT_EQ(out_of([&](std::string& s) { append_numeric(s, v, 4); }), "12345678901234567890123456.7891");
  EXPECT_EQ(out_of([&](std::string& s) { append_numeric(s, parse_numeric128("-0.00005", 30, 4), 4); }), "-0.0001");
  expect_error([] { parse_numeric128("1e26", 30, 4); }, SqlState::numeric_value_out_of_range, "numeric field overflow",
               "A field with precision 30, scale 4 must round to an absolute value less than 10^26.");
  expect_error([] { parse_numeric128("1e38", 38, 0); }, SqlState::numeric_value_out_of_range, "numeric field overflow",
               "A field with precision 38, scale 0 must round to an absolute value less than 10^38.");
  // Rescaling between typmods, PostgreSQL's apply_typmod rounding.
  EXPECT_TRUE(rescale_numeric128(parse_numeric_any("2.5").mantissa, 1, 38, 0) == 3);
  EXPECT_TRUE(rescale_numeric128(parse_numeric_any("-2.5").mantissa, 1, 38, 0) == -3);
  expect_error([] { rescale_numeric128(1, 0, 20, 20); }, SqlState::numeric_value_out_of_range, "numeric field overflow",
               "A field with precision 20, scale 20 must round to an absolute value less than 1.");
}

TEST(TypeIo, WideNumericBinaryMatchesPostgres) {
  // numeric_send() output of PostgreSQL 15 for the same values.
  const std::pair<const char*, const char*> cases[] = {
      {"123456789012345678901234567890.123456", "000a000700000006000c0d801ed204d2162e23340d801ed204d215e0"},
      {"-99999999999999999999999999999999999999", "000a0009400000000063270f270f270f270f270f270f270f270f270f"},
      {"0.000000000000000000000000000001", "0001fff80000001e0064"},
      {"1500", "000100000000000005dc"},
      {"0.00250", "0001ffff000000050019"},
  };
  for (const auto& [text, hex] : cases) {
    const NumericValue n = parse_numeric_any(text);
    std::string b;
    send_numeric(b, n.mantissa, n.scale);
    EXPECT_EQ(hex_bytes(b), hex) << text;
    const NumericValue back = recv_numeric_any(b);
    EXPECT_TRUE(back.mantissa == n.mantissa) << text;
    EXPECT_EQ(back.scale, n.scale) << text;
  }
}

TEST(TypeIo, Dates) {
  EXPECT_EQ(date_text(0), "2000-01-01");
  EXPECT_EQ(date_text(parse_date("   2020-1-5 ")), "2020-01-05");
  EXPECT_EQ(date_text(parse_date("1/8/1999")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("January 8, 1999")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("08-Jan-1999")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("1999-Jan-08")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("Jan 8 1999")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("1999 Jan 8")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("19990108")), "1999-01-08");
  EXPECT_EQ(date_text(parse_date("12/31/99")), "1999-12-31");
  EXPECT_EQ(date_text(parse_date("2000-02-28 BC")), "2000-02-28 BC");
  EXPECT_EQ(date_text(parse_date("0001-01-01 BC") - 1), "0002-12-31 BC");
  EXPECT_EQ(date_text(parse_date("4714-11-24 BC")), "4714-11-24 BC");
  EXPECT_EQ(date_text(parse_date("5874897-12-31")), "5874897-12-31");
  EXPECT_EQ(date_text(parse_date("99999-01-01")), "99999-01-01");
  EXPECT_EQ(date_text(parse_date("epoch")), "1970-01-01");
  EXPECT_EQ(date_text(parse_date("infinity")), "infinity");
  EXPECT_EQ(date_text(parse_date("-infinity")), "-infinity");
  EXPECT_EQ(parse_date("2000-01-01"), 0);
  EXPECT_EQ(parse_date("1970-01-01"), -10957);
  expect_error([] { parse_date("2000-02-29 BC"); }, SqlState::datetime_field_overflow,
               "date/time field value out of range: \"2000-02-29 BC\"");
  expect_error([] { parse_date("2021-02-30"); }, SqlState::datetime_field_overflow,
               "date/time field value out of range: \"2021-02-30\"");
  expect_error([] { parse_date("2021-13-01"); }, SqlState::datetime_field_overflow,
               "date/time field value out of range: \"2021-13-01\"");
  expect_error([] { parse_date("abc"); }, SqlState::invalid_datetime_format,
               "invalid input syntax for type date: \"abc\"");
  expect_error([] { parse_date("2021-01-02 abc"); }, SqlState::invalid_datetime_format,
               "invalid input syntax for type date: \"2021-01-02 abc\"");
  expect_error([] { parse_date("5874898-01-01"); }, SqlState::datetime_field_overflow,
               "date out of range: \"5874898-01-01\"");
  expect_error([] { parse_date("4714-11-23 BC"); }, SqlState::datetime_field_overflow,
               "date out of range: \"4714-11-23 BC\"");
}

TEST(TypeIo, Timestamps) {
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02 03:04:05.1234567")), "2021-01-02 03:04:05.123457");
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02T03:04")), "2021-01-02 03:04:00");
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02")), "2021-01-02 00:00:00");
  EXPECT_EQ(ts_text(parse_timestamp("0001-01-01 00:00:00 BC")), "0001-01-01 00:00:00 BC");
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02 03:04:05+02")), "2021-01-02 03:04:05");
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02 03:04:60")), "2021-01-02 03:05:00");
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02 24:00:00")), "2021-01-03 00:00:00");
  EXPECT_EQ(ts_text(parse_timestamp("2021-1-2 3:4:5.5")), "2021-01-02 03:04:05.5");
  EXPECT_EQ(ts_text(parse_timestamp("2021-01-02 03:04:05.9999999")), "2021-01-02 03:04:06");
  EXPECT_EQ(ts_text(parse_timestamp("infinity")), "infinity");
  EXPECT_EQ(ts_text(parse_timestamp("-infinity")), "-infinity");
  EXPECT_EQ(parse_timestamp("2000-01-01 00:00:01"), 1000000);
  expect_error([] { parse_timestamp("2021-01-02 25:00"); }, SqlState::datetime_field_overflow,
               "date/time field value out of range: \"2021-01-02 25:00\"");
  expect_error([] { parse_timestamp("294277-01-01"); }, SqlState::datetime_field_overflow,
               "timestamp out of range: \"294277-01-01\"");
  expect_error([] { parse_timestamp("2021-01-02 03:04:05 xyz"); }, SqlState::invalid_datetime_format,
               "invalid input syntax for type timestamp: \"2021-01-02 03:04:05 xyz\"");
}

TEST(TypeIo, CharacterTypes) {
  std::string scratch;
  EXPECT_EQ(coerce_char(SqlType::varchar(3), "abc  ", scratch), "abc");
  EXPECT_EQ(coerce_char(SqlType::bpchar(4), "ab", scratch), "ab  ");
  EXPECT_EQ(coerce_char(SqlType::bpchar(2), "é", scratch), "é ");
  EXPECT_EQ(coerce_char(SqlType::varchar(2), "éé", scratch), "éé");
  EXPECT_EQ(coerce_char(SqlType::varchar(3), "abcd", scratch, true), "abc");
  expect_error([&] { coerce_char(SqlType::varchar(3), "abcd", scratch); }, SqlState::string_data_right_truncation,
               "value too long for type character varying(3)");
  expect_error([&] { coerce_char(SqlType::bpchar(1), "ab", scratch); }, SqlState::string_data_right_truncation,
               "value too long for type character(1)");
  expect_error([] { check_utf8("a\xff"); }, SqlState::character_not_in_repertoire,
               "invalid byte sequence for encoding \"UTF8\": 0xff");
  check_utf8("plain ascii text that is long enough for the fast path, é ü");
}

TEST(TypeIo, BinaryRoundTrip) {
  const int32_t i4 = -123456;
  std::string b;
  append_binary_value(b, {TypeId::int4}, &i4);
  EXPECT_EQ(b, std::string("\xff\xfe\x1d\xc0", 4));
  int32_t back = 0;
  recv_binary_value({TypeId::int4}, b, &back);
  EXPECT_EQ(back, i4);
  const double d = 1.5;
  b.clear();
  append_binary_value(b, {TypeId::float8}, &d);
  EXPECT_EQ(b, std::string("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8));
  expect_error([] { int32_t v; recv_binary_value({TypeId::int4}, std::string_view("\x01\x02", 2), &v); },
               SqlState::invalid_binary_representation, "insufficient data left in message");
}

TEST(TypeIo, Time) {
  EXPECT_EQ(time_text(parse_time("1:2")), "01:02:00");
  EXPECT_EQ(time_text(parse_time("23:59:60")), "24:00:00");
  EXPECT_EQ(time_text(parse_time("12:00:00.5 am")), "00:00:00.5");
  EXPECT_EQ(time_text(parse_time(" 04:05:06.1234567-08 ")), "04:05:06.123457");
  EXPECT_EQ(time_text(parse_time("12:34:56.789", 0)), "12:34:57");
  EXPECT_EQ(time_text(parse_time("12:34:56.785", 2)), "12:34:56.79");
  EXPECT_EQ(parse_time("allballs"), 0);
  EXPECT_EQ(round_time(usecs_per_day - 1, 3), usecs_per_day);
  EXPECT_EQ(time_typmod({}), -1);
  EXPECT_EQ(time_typmod({9}), 6);
  expect_error([] { parse_time("25:00"); }, SqlState::datetime_field_overflow,
               "date/time field value out of range: \"25:00\"");
  expect_error([] { parse_time("abc"); }, SqlState::invalid_datetime_format, "invalid input syntax for type time: \"abc\"");
  expect_error([] { parse_time("2024-01-01"); }, SqlState::invalid_datetime_format,
               "invalid input syntax for type time: \"2024-01-01\"");
  std::string wire;
  for (int k = 7; k >= 0; --k) wire += static_cast<char>((usecs_per_day >> (8 * k)) & 0xff);
  EXPECT_EQ(recv_time(wire, -1), usecs_per_day);
  wire[7] = static_cast<char>(wire[7] + 1);
  expect_error([&] { recv_time(wire, -1); }, SqlState::datetime_field_overflow, "time out of range");
}

TEST(TypeIo, Bytea) {
  EXPECT_EQ(parse_bytea("\\x01 02\tFf"), std::string("\x01\x02\xff", 3));
  EXPECT_EQ(parse_bytea("a\\\\b\\000\\377"), std::string("a\\b\0\xff", 5));
  EXPECT_EQ(bytea_text(std::string("\0a\xff", 3)), "\\x0061ff");
  EXPECT_EQ(bytea_text(""), "\\x");
  std::string escaped;
  append_bytea_escape(escaped, std::string("a\\\0\x80", 4));
  EXPECT_EQ(escaped, "a\\\\\\000\\200");
  expect_error([] { parse_bytea("\\x0g"); }, SqlState::invalid_parameter_value, "invalid hexadecimal digit: \"g\"");
  expect_error([] { parse_bytea("\\x012"); }, SqlState::invalid_parameter_value,
               "invalid hexadecimal data: odd number of digits");
  expect_error([] { parse_bytea("a\\b"); }, SqlState::invalid_text_representation, "invalid input syntax for type bytea");
  std::string scratch;
  EXPECT_EQ(stored_string(TypeId::bytea, "\\x41", scratch), "A");
  EXPECT_EQ(stored_string(TypeId::text, "\\x41", scratch), "\\x41");
}
