#include "executor/scalar/function_support.hpp"

#include "executor/value_codec.hpp"

namespace tally::executor::scalar {

int numeric_rank(TypeId id) {
  switch (id) {
    case TypeId::int2: return 1;
    case TypeId::int4: return 2;
    case TypeId::int8: return 3;
    case TypeId::numeric: return 4;
    case TypeId::float4: return 5;
    case TypeId::float8: return 6;
    default: return 0;
  }
}

bool is_datetime(TypeId id) {
  return id == TypeId::date || id == TypeId::timestamp || id == TypeId::timestamptz;
}

Error no_operator(const std::string& op, SqlType l, SqlType r) {
  return Error(SqlState::undefined_function,
               "operator does not exist: " + format_type(l) + " " + op + " " + format_type(r))
      .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.");
}

Error no_function(const std::string& name, const std::vector<ExprPtr>& args) {
  std::string sig = name + "(";
  for (size_t i = 0; i < args.size(); ++i) sig += (i ? ", " : "") + format_type(args[i]->type);
  sig += ")";
  return Error(SqlState::undefined_function, "function " + sig + " does not exist")
      .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.");
}

ExprPtr call(SqlType result, std::string name, std::vector<ExprPtr> args, ScalarFunction fn, bool strict) {
  return std::make_unique<FunctionExpr>(result, std::move(name), std::move(args), std::move(fn), strict);
}

std::vector<ExprPtr> pack(ExprPtr a) {
  std::vector<ExprPtr> v;
  v.push_back(std::move(a));
  return v;
}
std::vector<ExprPtr> pack(ExprPtr a, ExprPtr b) {
  std::vector<ExprPtr> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return v;
}

Error out_of_range(TypeId t) {
  const char* name = t == TypeId::int2 ? "smallint" : (t == TypeId::int4 ? "integer" : "bigint");
  return Error(SqlState::numeric_value_out_of_range, std::string(name) + " out of range");
}

int64_t int_checked(__int128 v, TypeId t) {
  __int128 lo = INT64_MIN, hi = INT64_MAX;
  if (t == TypeId::int2) { lo = INT16_MIN; hi = INT16_MAX; }
  if (t == TypeId::int4) { lo = INT32_MIN; hi = INT32_MAX; }
  if (v < lo || v > hi) throw out_of_range(t);
  return static_cast<int64_t>(v);
}

std::string text_of(const Value& v) { return std::get<std::string>(v); }

ExprPtr to_type(ExprPtr e, TypeId id, BindContext& context) {
  return coerce_to(std::move(e), {id}, CastContext::implicit, context);
}

}  // namespace tally::executor::scalar
