// HAVING conjuncts as filters on partial states: see having_filter.hpp.
#include "executor/having_filter.hpp"

#include <optional>

#include "executor/numeric_vector.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {

namespace {

// `constant op x` as `x op' constant`.
std::string mirrored(const std::string& op) {
  if (op == "<") return ">";
  if (op == "<=") return ">=";
  if (op == ">") return "<";
  if (op == ">=") return "<=";
  return op;  // = and <> are symmetric
}

bool comparison_operator(const std::string& op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "=" || op == "<>";
}

void collect(const Expr& e, size_t keys, size_t aggregates, const std::vector<Value>* parameters,
             std::vector<GroupFilter>& out) {
  if (const auto* b = dynamic_cast<const BoolExpr*>(&e)) {
    if (b->op != BoolOp::and_) return;
    for (const auto& arg : b->args) collect(*arg, keys, aggregates, parameters, out);
    return;
  }
  const auto* f = dynamic_cast<const FunctionExpr*>(&e);
  if (f == nullptr || f->args.size() != 2 || !comparison_operator(f->name)) return;
  for (int side = 0; side < 2; ++side) {
    const auto* column = dynamic_cast<const ColumnExpr*>(f->args[static_cast<size_t>(side)].get());
    if (column == nullptr || column->index < 0) continue;
    const auto index = static_cast<size_t>(column->index);
    if (index < keys || index >= keys + aggregates) continue;
    const auto constant = exact_constant(*f->args[static_cast<size_t>(1 - side)], parameters);
    if (!constant || constant->scale > 38) continue;
    out.push_back(GroupFilter{index - keys, side == 0 ? f->name : mirrored(f->name), *constant});
    return;
  }
}

// 10^k in 128 bits, or nullopt past 10^38.
std::optional<__int128> power_of_ten(int32_t k) {
  if (k < 0 || k > 38) return std::nullopt;
  return numeric_pow10(k);
}

// a * 10^k, or nullopt where it leaves 127 bits.
std::optional<__int128> scaled(__int128 a, int32_t k) {
  const auto p = power_of_ten(k);
  if (!p) return std::nullopt;
  __int128 out;
  if (__builtin_mul_overflow(a, *p, &out)) return std::nullopt;
  return out;
}

}  // namespace

std::vector<GroupFilter> having_group_filter(const Expr& having, size_t keys, size_t aggregates,
                                             const std::vector<Value>* parameters) {
  std::vector<GroupFilter> out;
  collect(having, keys, aggregates, parameters, out);
  return out;
}

ScaledGroupTest::ScaledGroupTest(const GroupFilter& filter, int32_t scale) {
  const std::string& op = filter.op;
  op_ = op == "<" ? Op::lt : op == "<=" ? Op::le : op == ">" ? Op::gt : op == ">=" ? Op::ge : op == "=" ? Op::eq : Op::ne;
  if (filter.constant.scale <= scale) {
    const auto c = scaled(filter.constant.mantissa, scale - filter.constant.scale);
    if (c) constant_ = *c;
    else decided_ = true;
  } else {
    const auto f = power_of_ten(filter.constant.scale - scale);
    if (f) factor_ = *f;
    else decided_ = true;
    constant_ = filter.constant.mantissa;
  }
}

bool ScaledGroupTest::passes(__int128 value) const {
  if (decided_) return true;
  __int128 v = value;
  if (factor_ != 1 && __builtin_mul_overflow(value, factor_, &v)) return true;
  switch (op_) {
    case Op::lt: return v < constant_;
    case Op::le: return v <= constant_;
    case Op::gt: return v > constant_;
    case Op::ge: return v >= constant_;
    case Op::eq: return v == constant_;
    case Op::ne: return v != constant_;
  }
  return true;
}

}  // namespace tally::executor
