#include "executor/scalar/array_functions.hpp"

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {
namespace {

// An untyped literal argument ('{a,b}') is a text[].
ExprPtr array_argument(ExprPtr e, BindContext& context) {
  if (e->type.id == TypeId::unknown) return to_type(std::move(e), TypeId::text_array, context);
  return e;
}

// int2vector and oidvector count from 0, as in PostgreSQL (indkey[0] is the
// first key column); other arrays from 1.
int64_t lower_bound(TypeId array_type) { return array_type == TypeId::text_array ? 1 : 0; }

}  // namespace

ExprPtr make_array_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  const bool known = ((name == "array_to_string" && (n == 2 || n == 3)) || (name == "cardinality" && n == 1) ||
                      ((name == "array_length" || name == "array_lower" || name == "array_upper") && n == 2));
  if (!known) return nullptr;
  args[0] = array_argument(std::move(args[0]), context);
  const TypeId array_type = args[0]->type.id;
  if (!is_array_type(array_type)) return nullptr;
  if (name == "array_to_string") {
    for (size_t i = 1; i < n; ++i) args[i] = to_type(std::move(args[i]), TypeId::text, context);
    return call({TypeId::text}, name, std::move(args), [array_type](std::span<const Value> a) -> Value {
      if (is_null(a[0]) || is_null(a[1])) return Null{};
      const std::string& separator = std::get<std::string>(a[1]);
      const bool replace_nulls = a.size() == 3 && !is_null(a[2]);
      std::string out;
      bool first = true;
      for (const auto& element : array_elements(array_type, std::get<std::string>(a[0]))) {
        if (!element && !replace_nulls) continue;  // NULLs are left out without a NULL string
        if (!first) out += separator;
        out += element ? *element : std::get<std::string>(a[2]);
        first = false;
      }
      return out;
    }, false);
  }
  if (name == "cardinality") {
    return call({TypeId::int4}, name, std::move(args), [array_type](std::span<const Value> a) -> Value {
      return static_cast<int64_t>(array_elements(array_type, std::get<std::string>(a[0])).size());
    });
  }
  args[1] = to_type(std::move(args[1]), TypeId::int4, context);
  const int kind = name == "array_length" ? 0 : (name == "array_lower" ? 1 : 2);
  return call({TypeId::int4}, name, std::move(args), [array_type, kind](std::span<const Value> a) -> Value {
    const auto size = static_cast<int64_t>(array_elements(array_type, std::get<std::string>(a[0])).size());
    // One dimension; an empty array has none.
    if (std::get<int64_t>(a[1]) != 1 || size == 0) return Null{};
    if (kind == 0) return size;
    const int64_t lower = lower_bound(array_type);
    return kind == 1 ? lower : lower + size - 1;
  });
}

ExprPtr make_array_constructor(std::vector<ExprPtr> elements, BindContext& context) {
  for (auto& e : elements) {
    if (e->type.id == TypeId::unknown) e = to_type(std::move(e), TypeId::text, context);
  }
  std::vector<SqlType> types;
  for (const auto& e : elements) types.push_back(e->type);
  return call({TypeId::text_array}, "array", std::move(elements), [types](std::span<const Value> a) -> Value {
    std::vector<std::optional<std::string>> texts;
    for (size_t i = 0; i < a.size(); ++i) {
      if (is_null(a[i])) texts.emplace_back(std::nullopt);
      else texts.emplace_back(value_to_text(types[i], a[i]));
    }
    return array_literal(texts);
  }, false);
}

ExprPtr make_array_concat(ExprPtr left, ExprPtr right, BindContext& context) {
  left = array_argument(std::move(left), context);
  right = array_argument(std::move(right), context);
  const SqlType left_type = left->type, right_type = right->type;
  std::vector<ExprPtr> args;
  args.push_back(std::move(left));
  args.push_back(std::move(right));
  return call({TypeId::text_array}, "||", std::move(args), [left_type, right_type](std::span<const Value> a) -> Value {
    std::vector<std::optional<std::string>> elements;
    for (size_t i = 0; i < 2; ++i) {
      const SqlType type = i == 0 ? left_type : right_type;
      if (is_array_type(type.id)) {
        if (is_null(a[i])) continue;
        for (auto& e : array_elements(type.id, std::get<std::string>(a[i]))) elements.push_back(std::move(e));
      } else if (is_null(a[i])) {
        elements.emplace_back(std::nullopt);
      } else {
        elements.emplace_back(value_to_text(type, a[i]));
      }
    }
    if (is_null(a[0]) && is_null(a[1])) return Null{};
    return array_literal(elements);
  }, false);
}

ExprPtr make_array_subscript(ExprPtr array, ExprPtr index, BindContext& context) {
  array = array_argument(std::move(array), context);
  const TypeId array_type = array->type.id;
  if (!is_array_type(array_type)) {
    throw Error(SqlState::datatype_mismatch,
                "cannot subscript type " + format_type(array->type) + " because it does not support subscripting");
  }
  index = to_type(std::move(index), TypeId::int4, context);
  const SqlType element{array_element_type(array_type)};
  std::vector<ExprPtr> args;
  args.push_back(std::move(array));
  args.push_back(std::move(index));
  return call(element, "subscript", std::move(args), [array_type, element](std::span<const Value> a) -> Value {
    const auto elements = array_elements(array_type, std::get<std::string>(a[0]));
    const int64_t i = std::get<int64_t>(a[1]) - lower_bound(array_type);
    if (i < 0 || i >= static_cast<int64_t>(elements.size()) || !elements[static_cast<size_t>(i)]) return Null{};
    const std::string& text = *elements[static_cast<size_t>(i)];
    return element.id == TypeId::text ? Value{text} : parse_text(element, text);
  });
}

}  // namespace tally::executor::scalar
