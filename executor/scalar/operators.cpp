// Operators (arithmetic, comparison, LIKE, unary), NULLIF, IS DISTINCT
// FROM, boolean tests, GREATEST/LEAST and the common type of two branches,
// with PostgreSQL's result types and errors.
#include <cmath>
#include <optional>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/bytea_functions.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/scalar/time_functions.hpp"
#include "executor/reg_names.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/value_codec.hpp"
#include "executor/vector_arithmetic.hpp"
#include "executor/vector_comparison.hpp"

namespace tally::executor {

using namespace scalar;

namespace {

double float_checked(double r, double a, double b, bool is_float4) {
  if (std::isinf(r) && !std::isinf(a) && !std::isinf(b)) {
    throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
  }
  if (is_float4) {
    const float f = static_cast<float>(r);
    if (std::isinf(f) && !std::isinf(r)) throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
    if (f == 0 && r != 0) throw Error(SqlState::numeric_value_out_of_range, "value out of range: underflow");
    return f;
  }
  return r;
}

Error division_by_zero() { return Error(SqlState::division_by_zero, "division by zero"); }

ScalarFunction arithmetic(char op, SqlType type) {
  const TypeId t = type.id;
  if (is_integer(t)) {
    return [op, t](std::span<const Value> a) -> Value {
      const __int128 x = std::get<int64_t>(a[0]), y = std::get<int64_t>(a[1]);
      switch (op) {
        case '+': return int_checked(x + y, t);
        case '-': return int_checked(x - y, t);
        case '*': return int_checked(x * y, t);
        case '/':
          if (y == 0) throw division_by_zero();
          return int_checked(x / y, t);
        default:
          if (y == 0) throw division_by_zero();
          return int_checked(x % y, t);
      }
    };
  }
  if (t == TypeId::numeric) {
    return [op](std::span<const Value> a) -> Value {
      const Numeric& x = std::get<Numeric>(a[0]);
      const Numeric& y = std::get<Numeric>(a[1]);
      switch (op) {
        case '+': return x + y;
        case '-': return x - y;
        case '*': return x * y;
        case '/': return numeric_div(x, y);
        default: return numeric_mod(x, y);
      }
    };
  }
  const bool f4 = t == TypeId::float4;
  // float8mul and float8div: a zero result of operands that cannot give one
  // is an underflow (float4's is found by float_checked's rounding).
  auto underflow = [] { return Error(SqlState::numeric_value_out_of_range, "value out of range: underflow"); };
  return [op, f4, underflow](std::span<const Value> a) -> Value {
    const double x = std::get<double>(a[0]), y = std::get<double>(a[1]);
    switch (op) {
      case '+': return float_checked(x + y, x, y, f4);
      case '-': return float_checked(x - y, x, y, f4);
      case '*':
        if (!f4 && x * y == 0.0 && x != 0.0 && y != 0.0) throw underflow();
        return float_checked(x * y, x, y, f4);
      default:
        if (y == 0) throw division_by_zero();
        if (!f4 && x / y == 0.0 && x != 0.0 && !std::isinf(y)) throw underflow();
        return float_checked(x / y, x, y == 0 ? 1 : y, f4);
    }
  };
}

// The type both operands of an arithmetic/comparison operator are cast to.
SqlType arithmetic_type(SqlType l, SqlType r) {
  const int rl = numeric_rank(l.id), rr = numeric_rank(r.id);
  if (!rl || !rr) return {TypeId::unknown};
  if (l.id == TypeId::float4 && r.id == TypeId::float4) return {TypeId::float4};
  if (l.id == TypeId::float4 || r.id == TypeId::float4) return {TypeId::float8};
  if (l.id == TypeId::float8 || r.id == TypeId::float8) return {TypeId::float8};
  if (l.id == TypeId::numeric || r.id == TypeId::numeric) return {TypeId::numeric};
  return {rl >= rr ? l.id : r.id};
}

// Resolves unknown-typed operands (literals, untyped parameters) against the other side.
void resolve_unknowns(ExprPtr& left, ExprPtr& right, BindContext& context) {
  if (left->type.id == TypeId::unknown && right->type.id != TypeId::unknown) {
    left = coerce_to(std::move(left), {right->type.id}, CastContext::implicit, context);
  } else if (right->type.id == TypeId::unknown && left->type.id != TypeId::unknown) {
    right = coerce_to(std::move(right), {left->type.id}, CastContext::implicit, context);
  } else if (left->type.id == TypeId::unknown && right->type.id == TypeId::unknown) {
    left = coerce_to(std::move(left), {TypeId::text}, CastContext::implicit, context);
    right = coerce_to(std::move(right), {TypeId::text}, CastContext::implicit, context);
  }
}

ScalarFunction comparison(const std::string& op) {
  int want_lt = 0, want_eq = 0, want_gt = 0;
  if (op == "=") want_eq = 1;
  else if (op == "<>" || op == "!=") { want_lt = 1; want_gt = 1; }
  else if (op == "<") want_lt = 1;
  else if (op == "<=") { want_lt = 1; want_eq = 1; }
  else if (op == ">") want_gt = 1;
  else { want_gt = 1; want_eq = 1; }
  return [want_lt, want_eq, want_gt](std::span<const Value> a) -> Value {
    const int c = compare_values(a[0], a[1]);
    return c < 0 ? want_lt == 1 : (c == 0 ? want_eq == 1 : want_gt == 1);
  };
}

bool is_comparison(const std::string& op) {
  return op == "=" || op == "<>" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

}  // namespace

static bool is_oid_and_integer(SqlType a, SqlType b) {
  return (a.id == TypeId::oid && is_integer(b.id)) || (is_integer(a.id) && b.id == TypeId::oid);
}

// reg* types are OIDs: against each other, oid or an integer (PostgreSQL's
// implicit casts from the integers to them) they compare as oid.
static bool is_oid_kind(TypeId t) { return t == TypeId::oid || is_reg_type(t); }
static bool compares_as_oid(TypeId a, TypeId b) {
  return (is_oid_kind(a) || is_integer(a)) && (is_oid_kind(b) || is_integer(b));
}

SqlType common_supertype(SqlType a, SqlType b, const char* construct) {
  if (a.id == TypeId::unknown) return b.id == TypeId::unknown ? b : SqlType{b.id, b.typmod};
  if (b.id == TypeId::unknown) return a;
  if (a == b) return a;
  if (a.id == b.id) return {a.id};
  if (numeric_rank(a.id) && numeric_rank(b.id)) return arithmetic_type(a, b);
  // An OID against an integer compares as bigint: every OID and int4 fits.
  if (is_oid_and_integer(a, b)) return {TypeId::int8};
  if (compares_as_oid(a.id, b.id)) return {TypeId::oid};
  if (is_text_kind(a.id) && is_text_kind(b.id)) return {TypeId::text};
  if (is_datetime(a.id) && is_datetime(b.id)) {
    if (a.id == TypeId::timestamptz || b.id == TypeId::timestamptz) return {TypeId::timestamptz};
    return {TypeId::timestamp};
  }
  throw Error(SqlState::datatype_mismatch, std::string(construct) + " types " + format_type(a) + " and " +
                                               format_type(b) + " cannot be matched");
}

namespace {

// LIKE with a constant pattern (the usual `col LIKE '%word%'`): the pattern
// is held by the call, not broadcast into a string per row of every chunk.
ExprPtr like_constant(ExprPtr text, std::string pattern, bool negate, bool ci) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(text));
  auto like = std::make_shared<const LikePattern>(pattern, ci);
  auto e = std::make_unique<FunctionExpr>(SqlType{TypeId::boolean}, "like", std::move(args),
                                          [like, negate](std::span<const Value> a) -> Value {
                                            return like->matches(std::get<std::string>(a[0])) != negate;
                                          });
  e->like = std::make_shared<const FunctionExpr::LikeConstant>(FunctionExpr::LikeConstant{pattern, negate, ci});
  e->batch = [like, negate](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& text = *args[0];
    if (!text.coded() && text.texts.size() < rows) return false;
    out.resize(rows);
    if (!text.nulls.empty()) out.nulls.assign(rows, 0);
    // A coded column's entries are matched once each, as rows first hold
    // them: a chunk's million URLs hold far fewer distinct ones.
    std::vector<int8_t> matched;
    if (text.coded() && static_cast<size_t>(text.dictionary->size()) <= 4 * rows) {
      matched.assign(static_cast<size_t>(text.dictionary->size()), -1);
    }
    for (size_t i = 0; i < rows; ++i) {
      if (text.null_at(i)) {
        out.nulls[i] = 1;
        continue;
      }
      if (matched.empty()) {
        out.ints[i] = like->matches(text.text_at(i)) != negate;
        continue;
      }
      int8_t& m = matched[static_cast<size_t>(text.codes[i])];
      if (m < 0) m = like->matches(text.text_at(i)) ? 1 : 0;
      out.ints[i] = (m == 1) != negate;
    }
    return true;
  };
  return e;
}

}  // namespace

ExprPtr make_binary_operator(const std::string& op, ExprPtr left, ExprPtr right, BindContext& context) {
  // void (pg_sleep's result) has no operators but ||, whose anynonarray side takes any value.
  if ((left->type.id == TypeId::void_ || right->type.id == TypeId::void_) && op != "||") {
    throw no_operator(op, left->type, right->type);
  }
  if (ExprPtr e = make_regex_operator(op, left, right, context)) return e;
  if (op == "^@") {  // text ^@ text: starts_with
    std::vector<ExprPtr> both = pack(std::move(left), std::move(right));
    return make_function("starts_with", std::move(both), context);
  }
  if (op == "~~" || op == "!~~" || op == "~~*" || op == "!~~*") {
    left = to_type(std::move(left), TypeId::text, context);
    right = to_type(std::move(right), TypeId::text, context);
    const bool negate = op[0] == '!', ci = op.back() == '*';
    if (auto* pattern = dynamic_cast<ConstExpr*>(right.get()); pattern != nullptr && !is_null(pattern->value)) {
      return like_constant(std::move(left), std::get<std::string>(pattern->value), negate, ci);
    }
    ExprPtr e = call({TypeId::boolean}, op, pack(std::move(left), std::move(right)),
                     [negate, ci](std::span<const Value> a) -> Value {
                       return like_match(std::get<std::string>(a[0]), std::get<std::string>(a[1]), ci) != negate;
                     });
    // Over whole text columns: each row's strings are read where they are,
    // not copied into a Value per row.
    if (auto* f = dynamic_cast<FunctionExpr*>(e.get()); f != nullptr && f->strict) {
      f->batch = [negate, ci](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
        const Vector& text = *args[0];
        const Vector& pattern = *args[1];
        if ((!text.coded() && text.texts.size() < rows) || (!pattern.coded() && pattern.texts.size() < rows)) return false;
        out.resize(rows);
        const bool nulls = !text.nulls.empty() || !pattern.nulls.empty();
        if (nulls) out.nulls.assign(rows, 0);
        // A pattern is read again only where it differs from the row
        // before's (a parameter, `col LIKE $1`, is the same on every row).
        std::optional<LikePattern> like;
        std::string_view like_text;
        for (size_t i = 0; i < rows; ++i) {
          if (nulls && (text.null_at(i) || pattern.null_at(i))) {
            out.nulls[i] = 1;
            continue;
          }
          const std::string_view p = pattern.text_at(i);
          if (!like || p != like_text) {
            like.emplace(p, ci);
            like_text = p;
          }
          out.ints[i] = like->matches(text.text_at(i)) != negate;
        }
        return true;
      };
    }
    return e;
  }
  if (ExprPtr e = make_bytea_operator(op, left, right, context)) return e;
  if (op == "||") {
    if (left->type.id == TypeId::unknown) left = to_type(std::move(left), TypeId::text, context);
    if (right->type.id == TypeId::unknown) right = to_type(std::move(right), TypeId::text, context);
    if (!is_text_kind(left->type.id) && !is_text_kind(right->type.id)) throw no_operator(op, left->type, right->type);
    left = coerce_to(std::move(left), {TypeId::text}, CastContext::assignment, context);
    right = coerce_to(std::move(right), {TypeId::text}, CastContext::assignment, context);
    return call({TypeId::text}, "textcat", pack(std::move(left), std::move(right)),
                [](std::span<const Value> a) -> Value { return text_of(a[0]) + text_of(a[1]); });
  }
  if (ExprPtr e = make_time_operator(op, left, right, context)) return e;
  if (ExprPtr e = make_interval_operator(op, left, right, context)) return e;
  resolve_unknowns(left, right, context);
  const SqlType l = left->type, r = right->type;
  if (is_comparison(op)) {
    SqlType common{TypeId::unknown};
    if (numeric_rank(l.id) && numeric_rank(r.id)) common = arithmetic_type(l, r);
    else if (is_text_kind(l.id) && is_text_kind(r.id)) common = (l.id == TypeId::bpchar && r.id == TypeId::bpchar) ? SqlType{TypeId::bpchar} : SqlType{TypeId::text};
    else if (is_datetime(l.id) && is_datetime(r.id)) common = common_supertype(l, r, "comparison");
    else if (l.id == r.id) common = {l.id};
    else if (is_oid_and_integer(l, r)) common = {TypeId::int8};
    else if (compares_as_oid(l.id, r.id)) common = {TypeId::oid};
    else throw no_operator(op, l, r);
    left = coerce_to(std::move(left), common, CastContext::implicit, context);
    right = coerce_to(std::move(right), common, CastContext::implicit, context);
    ScalarFunction row_wise = comparison(op);
    if (common.id == TypeId::bpchar) {
      // char(n) compares ignoring trailing blanks.
      row_wise = [cmp = std::move(row_wise)](std::span<const Value> a) -> Value {
        std::string x = text_of(a[0]), y = text_of(a[1]);
        while (!x.empty() && x.back() == ' ') x.pop_back();
        while (!y.empty() && y.back() == ' ') y.pop_back();
        const Value v[2] = {x, y};
        return cmp(v);
      };
    }
    auto compare = std::make_unique<FunctionExpr>(SqlType{TypeId::boolean}, op, pack(std::move(left), std::move(right)),
                                                  std::move(row_wise));
    compare->batch = vector_comparison(op, common);
    compare->batch_takes_constants = static_cast<bool>(compare->batch);
    return compare;
  }
  if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%") {
    // date +/- integer, date - date
    if (l.id == TypeId::date && is_integer(r.id) && (op == "+" || op == "-")) {
      right = to_type(std::move(right), TypeId::int4, context);
      const bool minus = op == "-";
      return call({TypeId::date}, op, pack(std::move(left), std::move(right)), [minus](std::span<const Value> a) -> Value {
        const int64_t d = std::get<int64_t>(a[0]), n = std::get<int64_t>(a[1]);
        if (d == INT32_MIN || d == INT32_MAX) return d;  // infinite dates stay infinite
        const int64_t r = minus ? d - n : d + n;
        if (r < -2451545 || r > 2147483647 - 2451545) throw Error(SqlState::datetime_field_overflow, "date out of range");
        return r;
      });
    }
    if (is_integer(l.id) && r.id == TypeId::date && op == "+") {
      left = to_type(std::move(left), TypeId::int4, context);
      return call({TypeId::date}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
        return std::get<int64_t>(a[0]) + std::get<int64_t>(a[1]);
      });
    }
    if (l.id == TypeId::date && r.id == TypeId::date && op == "-") {
      return call({TypeId::int4}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
        const int64_t x = std::get<int64_t>(a[0]), y = std::get<int64_t>(a[1]);
        if (x == INT32_MIN || x == INT32_MAX || y == INT32_MIN || y == INT32_MAX) {
          throw Error(SqlState::datetime_field_overflow, "cannot subtract infinite dates");
        }
        return x - y;
      });
    }
    const SqlType type = arithmetic_type(l, r);
    if (type.id == TypeId::unknown || (op == "%" && is_float(type.id))) throw no_operator(op, l, r);
    left = coerce_to(std::move(left), type, CastContext::implicit, context);
    right = coerce_to(std::move(right), type, CastContext::implicit, context);
    auto e = std::make_unique<FunctionExpr>(type, op, pack(std::move(left), std::move(right)), arithmetic(op[0], type));
    e->batch = vector_arithmetic(op[0], type);
    e->batch_takes_constants = static_cast<bool>(e->batch);
    return e;
  }
  if (op == "&" || op == "|" || op == "#") {
    // Bitwise and, or, xor of integers (int2and ...), in the wider type.
    if (!is_integer(l.id) || !is_integer(r.id)) throw no_operator(op, l, r);
    const SqlType type = arithmetic_type(l, r);
    left = coerce_to(std::move(left), type, CastContext::implicit, context);
    right = coerce_to(std::move(right), type, CastContext::implicit, context);
    const char o = op[0];
    return call(type, op, pack(std::move(left), std::move(right)), [o](std::span<const Value> a) -> Value {
      const int64_t x = std::get<int64_t>(a[0]), y = std::get<int64_t>(a[1]);
      return o == '&' ? (x & y) : o == '|' ? (x | y) : (x ^ y);
    });
  }
  if (op == "<<" || op == ">>") {
    // Shifts of an integer by an int4 count, in the left operand's type,
    // wrapping as C does on PostgreSQL's platforms (int4shl).
    if (!is_integer(l.id) || !is_integer(r.id)) throw no_operator(op, l, r);
    right = to_type(std::move(right), TypeId::int4, context);
    const bool shift_left = op == "<<";
    const TypeId t = l.id;
    return call({t}, op, pack(std::move(left), std::move(right)), [shift_left, t](std::span<const Value> a) -> Value {
      const int64_t x = std::get<int64_t>(a[0]);
      const int bits = t == TypeId::int2 || t == TypeId::int4 ? 32 : 64;
      const int n = static_cast<int>(std::get<int64_t>(a[1]) & (bits - 1));
      if (bits == 32) {
        const auto v = static_cast<int32_t>(x);
        const int32_t r = shift_left ? static_cast<int32_t>(static_cast<uint32_t>(v) << n) : v >> n;
        return static_cast<int64_t>(t == TypeId::int2 ? static_cast<int16_t>(r) : r);
      }
      return shift_left ? static_cast<int64_t>(static_cast<uint64_t>(x) << n) : x >> n;
    });
  }
  if (op == "^") {
    const SqlType type = arithmetic_type(l, r);
    if (type.id == TypeId::unknown) throw no_operator(op, l, r);
    std::vector<ExprPtr> args = pack(std::move(left), std::move(right));
    return make_function("power", std::move(args), context);
  }
  throw no_operator(op, l, r);
}

ExprPtr make_unary_operator(const std::string& op, ExprPtr arg, BindContext& context) {
  if (arg->type.id == TypeId::unknown) arg = to_type(std::move(arg), TypeId::text, context);
  const SqlType t = arg->type;
  if (op == "+" && numeric_rank(t.id)) return arg;
  if (op == "-" && t.id == TypeId::interval) return make_interval_negate(std::move(arg));
  if (op == "-" && numeric_rank(t.id)) {
    // Fold negative literals so that -2147483648 stays an int4 constant.
    if (auto* k = dynamic_cast<ConstExpr*>(arg.get())) {
      if (!is_null(k->value)) {
        if (is_integer(t.id)) return std::make_unique<ConstExpr>(t, int_checked(-static_cast<__int128>(std::get<int64_t>(k->value)), t.id));
        if (t.id == TypeId::numeric) return std::make_unique<ConstExpr>(t, -std::get<Numeric>(k->value));
      }
    }
    ExprPtr negate = call(t, "-", pack(std::move(arg)), [t](std::span<const Value> a) -> Value {
      if (is_integer(t.id)) return int_checked(-static_cast<__int128>(std::get<int64_t>(a[0])), t.id);
      if (t.id == TypeId::numeric) return -std::get<Numeric>(a[0]);
      return -std::get<double>(a[0]);
    });
    if (t.id == TypeId::numeric) static_cast<FunctionExpr&>(*negate).batch = vector_numeric_negate();
    return negate;
  }
  if (op == "~" && is_integer(t.id)) {
    return call(t, op, pack(std::move(arg)), [](std::span<const Value> a) -> Value { return ~std::get<int64_t>(a[0]); });
  }
  if ((op == "|/" || op == "||/") && numeric_rank(t.id)) {
    // PostgreSQL's square and cube root operators take float8 only.
    std::vector<ExprPtr> args = pack(to_type(std::move(arg), TypeId::float8, context));
    return make_function(op == "|/" ? "sqrt" : "cbrt", std::move(args), context);
  }
  if (op == "@" && numeric_rank(t.id)) {
    std::vector<ExprPtr> args = pack(std::move(arg));
    return make_function("abs", std::move(args), context);
  }
  throw Error(SqlState::undefined_function, "operator does not exist: " + op + " " + format_type(t))
      .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast.");
}

ExprPtr make_nullif(ExprPtr left, ExprPtr right, BindContext& context) {
  resolve_unknowns(left, right, context);
  const SqlType result = left->type;
  auto eq = make_binary_operator("=", nullptr == left ? nullptr : std::move(left), std::move(right), context);
  // nullif(a, b): a unless a = b. The comparison node holds a and b; evaluate
  // it and a's value from its first argument.
  auto* f = dynamic_cast<FunctionExpr*>(eq.get());
  ScalarFunction cmp = f->fn;
  std::vector<ExprPtr> args = std::move(f->args);
  // Compare values in the common type but return the first argument's value cast back.
  const SqlType common = args[0]->type;
  return call(result, "nullif", std::move(args), [cmp, common, result](std::span<const Value> a) -> Value {
    if (is_null(a[0])) return Null{};
    if (!is_null(a[1]) && std::get<bool>(cmp(a))) return Null{};
    return cast_value(a[0], common, result, false);
  }, false);
}

ExprPtr make_is_distinct(ExprPtr left, ExprPtr right, bool not_distinct, BindContext& context) {
  auto eq = make_binary_operator("=", std::move(left), std::move(right), context);
  auto* f = dynamic_cast<FunctionExpr*>(eq.get());
  ScalarFunction cmp = f->fn;
  // Each variant under its own name: two calls of one name and arguments
  // are one value (expression_equality.hpp).
  return call({TypeId::boolean}, not_distinct ? "is not distinct from" : "is distinct from", std::move(f->args),
              [cmp, not_distinct](std::span<const Value> a) -> Value {
                bool distinct;
                if (is_null(a[0]) || is_null(a[1])) distinct = is_null(a[0]) != is_null(a[1]);
                else distinct = !std::get<bool>(cmp(a));
                return distinct != not_distinct;
              }, false);
}

ExprPtr make_boolean_test(ExprPtr arg, const std::string& test) {
  return call({TypeId::boolean}, "booltest " + test, pack(std::move(arg)), [test](std::span<const Value> a) -> Value {
    const bool n = is_null(a[0]);
    const bool v = !n && std::get<bool>(a[0]);
    if (test == "IS_TRUE") return !n && v;
    if (test == "IS_NOT_TRUE") return n || !v;
    if (test == "IS_FALSE") return !n && !v;
    if (test == "IS_NOT_FALSE") return n || v;
    if (test == "IS_UNKNOWN") return n;
    return !n;  // IS_NOT_UNKNOWN
  }, false);
}

ExprPtr make_greatest_least(bool greatest, std::vector<ExprPtr> args, BindContext& context) {
  SqlType common{TypeId::unknown};
  for (const auto& a : args) common = common_supertype(common, a->type, greatest ? "GREATEST" : "LEAST");
  if (common.id == TypeId::unknown) common = {TypeId::text};
  for (auto& a : args) a = coerce_to(std::move(a), common, CastContext::implicit, context);
  return call(common, greatest ? "greatest" : "least", std::move(args), [greatest](std::span<const Value> a) -> Value {
    Value best = Null{};
    for (const auto& v : a) {
      if (is_null(v)) continue;
      if (is_null(best) || (greatest ? compare_values(v, best) > 0 : compare_values(v, best) < 0)) best = v;
    }
    return best;
  }, false);
}

}  // namespace tally::executor
