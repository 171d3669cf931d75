#include "executor/array_comparison.hpp"

#include <functional>

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {
namespace {

std::function<bool(int)> comparison(const std::string& op) {
  if (op == "=") return [](int c) { return c == 0; };
  if (op == "<>" || op == "!=") return [](int c) { return c != 0; };
  if (op == "<") return [](int c) { return c < 0; };
  if (op == "<=") return [](int c) { return c <= 0; };
  if (op == ">") return [](int c) { return c > 0; };
  if (op == ">=") return [](int c) { return c >= 0; };
  return {};
}

}  // namespace

ExprPtr make_array_comparison(const std::string& op, bool all, ExprPtr left, ExprPtr right, BindContext& context) {
  const auto holds = comparison(op);
  if (!holds) {
    throw Error(SqlState::feature_not_supported, "operator " + op + (all ? " ALL" : " ANY") + " (array) is not supported");
  }
  // An untyped literal on the right is an array of the left side's kind.
  if (right->type.id == TypeId::unknown) right = coerce_to(std::move(right), {TypeId::text_array}, CastContext::implicit, context);
  const TypeId array_type = right->type.id;
  if (!is_array_type(array_type)) {
    throw Error(SqlState::wrong_object_type, "op ANY/ALL (array) requires array on right side");
  }
  if (left->type.id == TypeId::unknown) {
    left = coerce_to(std::move(left), {array_element_type(array_type)}, CastContext::implicit, context);
  }
  // Elements are read as the left side's type (attnum int2 = ANY (indkey)):
  // text sides compare as text, the others by value.
  const SqlType element_type = is_text_kind(left->type.id) ? SqlType{TypeId::text} : left->type;
  const bool text_side = is_text_kind(left->type.id);
  std::vector<ExprPtr> args;
  args.push_back(std::move(left));
  args.push_back(std::move(right));
  auto fn = [holds, all, array_type, element_type, text_side](std::span<const Value> a) -> Value {
    if (is_null(a[1])) return Null{};
    const auto elements = array_elements(array_type, std::get<std::string>(a[1]));
    if (elements.empty()) return all;
    if (is_null(a[0])) return Null{};
    bool saw_null = false;
    for (const auto& element : elements) {
      if (!element) {
        saw_null = true;
        continue;
      }
      const Value value = text_side ? Value{*element} : parse_text(element_type, *element);
      if (holds(compare_values(a[0], value)) != all) return !all;
    }
    if (saw_null) return Null{};
    return all;
  };
  // The operator is in the name: two calls of one name and arguments are
  // one value (expression_equality.hpp), and `x = ANY (a)` is not `x < ANY (a)`.
  return std::make_unique<FunctionExpr>(SqlType{TypeId::boolean}, op + (all ? " all" : " any"), std::move(args),
                                        std::move(fn), /*strict=*/false);
}

}  // namespace tally::executor
