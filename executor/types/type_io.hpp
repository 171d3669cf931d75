#pragma once
// PostgreSQL 15-exact conversions between Tally's native values and the wire
// and COPY representations: text input (typinput), text output (typoutput) and
// the binary send/recv formats, for every storable type.
//
// Native forms (what storage/ keeps, see common/sql_type.hpp):
//   boolean: uint8 0/1          int2/int4/int8: int16/int32/int64
//   float4/float8: float/double
//   numeric(p<=18,s): int64 scaled by 10^s; numeric(19..38,s): int128 scaled
//   by 10^s; unconstrained numeric: int128 mantissa + int32 display scale +
//   4 zero bytes (storage/numeric_slot.hpp; storage_width(SqlType))
//   date: int32 days since 2000-01-01 (INT32_MIN/MAX = -infinity/infinity)
//   timestamp: int64 µs since 2000-01-01 (INT64_MIN/MAX = -infinity/infinity)
//   time: int64 µs since midnight, 0 .. 24:00:00
//   timetz: a time and its UTC offset packed in an int64 (timetz.hpp)
//   text kinds: the string itself (storage dictionary-encodes it).
//   bytea: its raw bytes (stored like text); text form hex ('\x0102').
//
// Output functions APPEND to a caller-owned buffer and never allocate beyond
// that buffer's growth, because result streaming and COPY TO run them millions
// of times per second. Input functions throw tally::Error with PostgreSQL's
// SQLSTATE and message (22P02, 22003, 22007, 22008, 22001, 22P03).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/sql_type.hpp"

namespace tally::types {

// Special native values PostgreSQL uses for ±infinity.
constexpr int32_t date_neg_infinity = INT32_MIN;
constexpr int32_t date_pos_infinity = INT32_MAX;
constexpr int64_t timestamp_neg_infinity = INT64_MIN;
constexpr int64_t timestamp_pos_infinity = INT64_MAX;
constexpr int64_t usecs_per_day = 86'400'000'000LL;

// ---- text output -----------------------------------------------------------
void append_bool(std::string& out, bool value);
void append_int(std::string& out, int64_t value);
// Shortest round-trip digits, PostgreSQL's extra_float_digits=1 rendering
// (exponent form when the decimal exponent is < -4 or >= 15 (float8) / 6 (float4)).
void append_float8(std::string& out, double value);
void append_float4(std::string& out, float value);
// scaled / 10^scale printed with exactly `scale` fraction digits. The 128-bit
// overload serves aggregates (sum of numeric) that outgrow int64.
void append_numeric(std::string& out, int64_t scaled, int scale);
void append_numeric(std::string& out, __int128 scaled, int scale);
void append_date(std::string& out, int32_t days);
void append_timestamp(std::string& out, int64_t micros);
void append_time(std::string& out, int64_t micros);
// bytea_out with bytea_output = 'hex': \x and two lowercase digits a byte.
void append_bytea(std::string& out, std::string_view bytes);
// bytea_out with bytea_output = 'escape': the bytes 0x20 .. 0x7e as they are
// (a backslash doubled), every other byte \ooo (octal).
void append_bytea_escape_output(std::string& out, std::string_view bytes);
// bytea_out as the bytea_output of this thread's statement says
// (bytea_output.hpp).
void append_bytea_out(std::string& out, std::string_view bytes);
// encode(bytes, 'escape'): bytes 1..127 as they are (a backslash doubled),
// \ooo (octal) for 0 and the bytes from 128 up.
void append_bytea_escape(std::string& out, std::string_view bytes);

// Text output of one fixed-width native value (value points at
// storage_width(type) bytes). Not for text kinds.
void append_text_value(std::string& out, SqlType type, const void* value);

// ---- binary send (the wire binary format; network byte order) -------------
void send_numeric(std::string& out, int64_t scaled, int scale);
void send_numeric(std::string& out, __int128 scaled, int scale);
// Binary form of one fixed-width native value (not text kinds: their binary
// form is the raw string bytes).
void append_binary_value(std::string& out, SqlType type, const void* value);

// ---- text input --------------------------------------------------------------
bool parse_bool(std::string_view text);
int16_t parse_int2(std::string_view text);
int32_t parse_int4(std::string_view text);
int64_t parse_int8(std::string_view text);
float parse_float4(std::string_view text);
double parse_float8(std::string_view text);
// numeric(precision, scale) input: rounds half away from zero to `scale`
// digits; 22003 "numeric field overflow" when it needs more than precision.
int64_t parse_numeric(std::string_view text, int precision, int scale);
// The same for any precision up to 38 (numeric(19..38,s) columns).
__int128 parse_numeric128(std::string_view text, int precision, int scale);
// A numeric without typmod: mantissa * 10^-scale, scale = PostgreSQL's display
// scale (every digit written is kept: '1.50' has scale 2, '1.5e5' scale 0).
struct NumericValue {
  __int128 mantissa = 0;
  int32_t scale = 0;
};
// Unconstrained numeric input. More than 38 significant digits: 0A000
// (Tally's limit); NaN/Infinity: 0A000; bad syntax: 22P02.
NumericValue parse_numeric_any(std::string_view text);
int32_t parse_date(std::string_view text);
int64_t parse_timestamp(std::string_view text);
// time_in: HH:MM[:SS[.f]] with AM/PM, 'allballs', 'now', an optional date
// before and zone after it (both ignored); rounded to time(p)'s typmod
// (-1: microseconds). 22007 bad syntax, 22008 a field out of range.
int64_t parse_time(std::string_view text, int32_t typmod = -1);
// time(p)'s typmod from its modifiers (anytime_typmodin): none is -1, one
// 0..6 is p, above 6 is 6 (PostgreSQL warns and reduces it); 22023 for a
// negative p or more than one modifier.
int32_t time_typmod(const std::vector<int64_t>& modifiers);
// AdjustTimeForTypmod: micros rounded half away from zero to p = typmod
// fraction digits (typmod < 0 or >= 6: unchanged).
int64_t round_time(int64_t micros, int32_t typmod);
// byteain: hex ('\x' then pairs of hex digits, whitespace between pairs) or
// escape format (\\ and \ooo octal escapes, other bytes as they are).
// 22023 for bad hex, 22P02 for a bad escape.
std::string parse_bytea(std::string_view text);
// decode(text, 'escape'): the escape format alone, even after a leading \x.
std::string parse_bytea_escape(std::string_view text);
// The bytes a column of `type` stores for a value in its text form: bytea's
// input function applied, other string types' text unchanged (scratch holds
// the bytes when they differ).
std::string_view stored_string(TypeId type, std::string_view text, std::string& scratch);
// The text form of a stored string of `type` (bytea: as bytea_output says) appended to out.
void append_stored_string(std::string& out, TypeId type, std::string_view bytes);
// The time of day a time text gives ('allballs' and 'now' not included),
// and the UTC offset it names, if any (seconds east), for timetz (timetz.hpp).
int64_t parse_time_zone(std::string_view text, bool& has_zone, int& zone_seconds);
// The local time a timestamp text gives, and the UTC offset it names, if any
// (seconds east: '+02', '-05:30', 'Z'), for timestamptz (time_zone.hpp).
int64_t parse_timestamp_zone(std::string_view text, bool& has_zone, int& zone_seconds);

// Parses text into the native value of a fixed-width type at out
// (storage_width(type) bytes). Not for text kinds.
void parse_text_value(SqlType type, std::string_view text, void* out);

// Applies varchar(n)/char(n) length rules to an input string. Returns the
// value to store: `text` itself, a prefix of it (trailing spaces beyond n are
// cut, as PostgreSQL does), or — for char(n) — `scratch` filled with the
// blank-padded value. Throws 22001 "value too long for type character
// varying(n)" when non-space characters exceed n, unless explicit_cast, which
// truncates silently like PostgreSQL's explicit casts. text/unconstrained
// types return `text` unchanged.
std::string_view coerce_char(SqlType type, std::string_view text, std::string& scratch,
                             bool explicit_cast = false);
// Number of UTF-8 characters in text.
size_t utf8_length(std::string_view text);
// Throws 22021 invalid_byte_sequence ("invalid byte sequence for encoding
// \"UTF8\": 0x..") when text is not valid UTF-8 or contains NUL.
void check_utf8(std::string_view text);

// ---- binary receive ---------------------------------------------------------
// Parses the binary wire form of a fixed-width type into its native value.
// Throws 22P03 on a wrong length or malformed value.
void recv_binary_value(SqlType type, std::string_view bytes, void* out);
int64_t recv_numeric(std::string_view bytes, int precision, int scale);
// time_recv: 8 bytes of µs since midnight; 22008 outside 0 .. 24:00:00.
int64_t recv_time(std::string_view bytes, int32_t typmod);
// The binary form of an unconstrained numeric (display scale from the wire).
NumericValue recv_numeric_any(std::string_view bytes);

// ---- helpers shared with casts --------------------------------------------
// The name PostgreSQL uses in input error messages ("integer", "double precision").
std::string_view input_type_name(TypeId id);
// Error(22P02, invalid input syntax for type <name>: "<text>").
Error invalid_input(std::string_view type_name, std::string_view text);
// Rounds/overflow-checks a numeric scaled value of scale `from_scale` into
// numeric(precision, scale) (used by casts between numeric typmods).
int64_t rescale_numeric(__int128 scaled, int from_scale, int precision, int scale);
// The same for any precision up to 38.
__int128 rescale_numeric128(__int128 scaled, int from_scale, int precision, int scale);
// Error 22003 numeric field overflow with PostgreSQL's detail.
Error numeric_overflow(int precision, int scale);

// Calendar helpers (PostgreSQL's date2j/j2date; year <= 0 means BC: 0 = 1 BC).
int32_t date_from_ymd(int year, int month, int day);  // days since 2000-01-01
void ymd_from_date(int32_t days, int& year, int& month, int& day);

}  // namespace tally::types
