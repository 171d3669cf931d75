#include "executor/scalar_functions.hpp"

#include "common/error.hpp"
#include "executor/scalar/array_functions.hpp"
#include "executor/scalar/bytea_functions.hpp"
#include "executor/scalar/catalog_functions.hpp"
#include "executor/scalar/digest_functions.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/scalar/time_functions.hpp"

namespace tally::executor {

// Functions by family (executor/scalar/): system information, math, text,
// bytea, time, text editing, regular expressions, to_char, interval, date and
// timestamp.
ExprPtr make_function(const std::string& name, std::vector<ExprPtr> args, BindContext& context) {
  if (ExprPtr e = scalar::make_system_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_catalog_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_array_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_math_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_bytea_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_digest_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_time_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_text_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_text_edit_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_regex_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_format_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_interval_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_datetime_function(name, args, context)) return e;
  if (name == "to_date" || name == "to_timestamp" || name == "to_number") {
    throw Error(SqlState::feature_not_supported, "function " + name + " is not supported");
  }
  throw scalar::no_function(name, args);
}

}  // namespace tally::executor
