#pragma once
// Resolution of operators and scalar functions by name and argument types,
// following PostgreSQL's choices (result types, implicit casts, errors 42883
// "operator/function does not exist", 42725 ambiguity) and their row-wise
// implementations with PostgreSQL's errors (22003 overflow, 22012 division by zero).
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor {

ExprPtr make_binary_operator(const std::string& op, ExprPtr left, ExprPtr right, BindContext& context);
ExprPtr make_unary_operator(const std::string& op, ExprPtr arg, BindContext& context);
ExprPtr make_function(const std::string& name, std::vector<ExprPtr> args, BindContext& context);
ExprPtr make_nullif(ExprPtr left, ExprPtr right, BindContext& context);
ExprPtr make_is_distinct(ExprPtr left, ExprPtr right, bool not_distinct, BindContext& context);
ExprPtr make_boolean_test(ExprPtr arg, const std::string& test);
ExprPtr make_greatest_least(bool greatest, std::vector<ExprPtr> args, BindContext& context);
// typmod: the precision p of LOCALTIME(p) (SVFOP_LOCALTIME_N); other ops ignore it.
ExprPtr make_sql_value_function(const std::string& op, BindContext& context, int32_t typmod = 0);
// The common type of two branches (CASE, COALESCE, IN, UNION); 42804 when none.
SqlType common_supertype(SqlType a, SqlType b, const char* construct);

// Text helpers shared with aggregates and the engines.
std::string utf8_lower(std::string_view s);
std::string utf8_upper(std::string_view s);
bool like_match(std::string_view text, std::string_view pattern, bool case_insensitive);
// A LIKE pattern read once, matched against many texts (a constant pattern:
// the scan of a million comments does not look for '_' and '\\' in it per row).
class LikePattern {
 public:
  LikePattern(std::string_view pattern, bool case_insensitive);
  bool matches(std::string_view text) const;

 private:
  std::string pattern_;
  bool case_insensitive_;
  // Case-sensitive, no '_' or escape: the text before the first '%', the
  // runs between '%'s (empty ones left out) and the text after the last.
  bool runs_only_ = false, percent_ = false;
  std::string head_, tail_;
  std::vector<std::string> middle_;
};

}  // namespace tally::executor
