#pragma once
// What the scalar function and operator families share: errors, the call
// node with PostgreSQL's strictness, implicit casts, checked integer
// results, and each family's entry point.
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "executor/binder.hpp"

namespace tally::executor::scalar {

constexpr int64_t kUsecsPerDay = 86'400'000'000LL;
constexpr int64_t kUsecsPerHour = 3'600'000'000LL;
constexpr int64_t kUsecsPerMinute = 60'000'000LL;

int numeric_rank(TypeId id);
bool is_datetime(TypeId id);
Error no_operator(const std::string& op, SqlType l, SqlType r);
// 42883 "function ... does not exist" with the argument types.
Error no_function(const std::string& name, const std::vector<ExprPtr>& args);
// A FunctionExpr; strict: NULL in, NULL out without calling fn.
ExprPtr call(SqlType result, std::string name, std::vector<ExprPtr> args, ScalarFunction fn, bool strict = true);
std::vector<ExprPtr> pack(ExprPtr a);
std::vector<ExprPtr> pack(ExprPtr a, ExprPtr b);
// 22003 "<type> out of range".
Error out_of_range(TypeId t);
// v as an integer of type t; 22003 when it does not fit.
int64_t int_checked(__int128 v, TypeId t);
std::string text_of(const Value& v);
// e implicitly cast to id.
ExprPtr to_type(ExprPtr e, TypeId id, BindContext& context);

// The families of make_function. Each returns the call when `name` with
// these arguments is one of its functions (possibly casting the arguments),
// and nullptr, with the arguments untouched, when it is not.
ExprPtr make_system_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
ExprPtr make_math_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// exp, ln, log, log10 (float8 and numeric) and log(b, x).
ExprPtr make_logarithm_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// sin ... atan2, degrees, radians, pi, random, setseed.
ExprPtr make_trigonometric_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
ExprPtr make_text_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
ExprPtr make_datetime_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// left/right, lpad/rpad, translate, split_part, initcap, repeat, reverse, position.
ExprPtr make_text_edit_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// regexp_replace, regexp_match, substring(s from pattern), similar_to_escape.
ExprPtr make_regex_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// to_date(text, template), to_timestamp(text, template).
ExprPtr make_to_date_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// to_char of dates, timestamps and numbers.
ExprPtr make_format_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// s ~ p, s ~* p, s !~ p, s !~* p; nullptr for other operators.
ExprPtr make_regex_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context);

// Byte offsets of the UTF-8 characters of s (text functions count characters).
std::vector<size_t> utf8_char_starts(std::string_view s);

}  // namespace tally::executor::scalar
