#include "executor/row_comparison.hpp"

#include <vector>

#include "common/error.hpp"
#include "executor/expression.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor {
namespace {

void check_sizes(size_t left_size, size_t right_size) {
  if (left_size != right_size) throw Error(SqlState::syntax_error, "unequal number of entries in row expressions");
}

ExprPtr both(ExprPtr a, ExprPtr b, BoolOp op) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return std::make_unique<BoolExpr>(op, std::move(args));
}

// Every pair's `op` joined by `join` (AND for =, OR for <>).
ExprPtr every_pair(const std::string& op, BoolOp join, const RowElement& left, const RowElement& right, size_t size,
                   BindContext& context) {
  ExprPtr result = make_binary_operator(op, left(0), right(0), context);
  for (size_t i = 1; i < size; ++i) result = both(std::move(result), make_binary_operator(op, left(i), right(i), context), join);
  return result;
}

}  // namespace

ExprPtr make_row_comparison(const std::string& op, const RowElement& left, size_t left_size, const RowElement& right,
                            size_t right_size, BindContext& context) {
  check_sizes(left_size, right_size);
  if (left_size == 0) throw Error(SqlState::feature_not_supported, "cannot compare rows of zero length");
  if (op == "=") return every_pair("=", BoolOp::and_, left, right, left_size, context);
  if (op == "<>" || op == "!=") return every_pair("<>", BoolOp::or_, left, right, left_size, context);
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    const std::string strict = op.substr(0, 1);
    // From the last pair (the operator itself: <= holds on equal rows)
    // back to the first: pair i decides unless it is equal.
    ExprPtr result = make_binary_operator(op, left(left_size - 1), right(left_size - 1), context);
    for (size_t i = left_size - 1; i-- > 0;) {
      ExprPtr equal_then = both(make_binary_operator("=", left(i), right(i), context), std::move(result), BoolOp::and_);
      result = both(make_binary_operator(strict, left(i), right(i), context), std::move(equal_then), BoolOp::or_);
    }
    return result;
  }
  // Another operator: PostgreSQL first resolves it on the first pair.
  const ExprPtr first = make_binary_operator(op, left(0), right(0), context);
  if (first->type.id != TypeId::boolean) {
    throw Error(SqlState::datatype_mismatch,
                "row comparison operator must yield type boolean, not type " + format_type(first->type));
  }
  throw Error(SqlState::undefined_function, "could not determine interpretation of row comparison operator " + op)
      .with_hint("Row comparison operators must be associated with btree operator families.");
}

ExprPtr make_row_distinct(bool not_distinct, const RowElement& left, size_t left_size, const RowElement& right,
                          size_t right_size, BindContext& context) {
  check_sizes(left_size, right_size);
  if (left_size == 0) throw Error(SqlState::feature_not_supported, "cannot compare rows of zero length");
  ExprPtr result = make_is_distinct(left(0), right(0), false, context);
  for (size_t i = 1; i < left_size; ++i)
    result = both(std::move(result), make_is_distinct(left(i), right(i), false, context), BoolOp::or_);
  if (!not_distinct) return result;
  std::vector<ExprPtr> one;
  one.push_back(std::move(result));
  return std::make_unique<BoolExpr>(BoolOp::not_, std::move(one));
}

}  // namespace tally::executor
