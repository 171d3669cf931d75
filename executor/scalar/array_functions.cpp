#include "executor/scalar/array_functions.hpp"

#include <optional>

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/cast.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {
namespace {

// An untyped literal argument ('{a,b}') is a text[].
ExprPtr array_argument(ExprPtr e, BindContext& context) {
  if (e->type.id == TypeId::unknown) return to_type(std::move(e), TypeId::text_array, context);
  return e;
}

// PostgreSQL's NAMEDATALEN: a name holds 64 bytes, zero-padded.
constexpr int64_t kNameBytes = 64;

// name[i]: the i-th byte as "char" (a zero byte past the name's end, NULL
// past the 64 bytes).
ExprPtr name_subscript(ExprPtr name, ExprPtr index, BindContext& context) {
  index = to_type(std::move(index), TypeId::int4, context);
  std::vector<ExprPtr> args;
  args.push_back(std::move(name));
  args.push_back(std::move(index));
  return call({TypeId::char_}, "subscript", std::move(args), [](std::span<const Value> a) -> Value {
    const std::string& text = std::get<std::string>(a[0]);
    const int64_t i = std::get<int64_t>(a[1]);
    if (i < 0 || i >= kNameBytes) return Null{};
    return i < static_cast<int64_t>(text.size()) ? std::string(1, text[static_cast<size_t>(i)]) : std::string();
  });
}

// The element type of an array type name held as text[] (regtype[] -> regtype),
// or as smallint[].
std::optional<TypeId> text_held_array_element(const nlohmann::json& type_name) {
  if (!type_name.contains("arrayBounds")) return std::nullopt;
  const auto& names = type_name.value("names", nlohmann::json::array());
  if (names.empty()) return std::nullopt;
  const std::string name = names.back().contains("String") ? names.back()["String"].value("sval", "") : "";
  if (name == "regtype") return TypeId::regtype;
  if (name == "regclass") return TypeId::regclass;
  if (name == "regnamespace") return TypeId::regnamespace;
  if (name == "regproc") return TypeId::regproc;
  if (name == "regoper") return TypeId::regoper;
  if (name == "int2" || name == "smallint") return TypeId::int2;
  return std::nullopt;
}

}  // namespace

ExprPtr make_array_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  if (name == "string_to_array" && (n == 2 || n == 3)) {
    // Split at each delimiter; a NULL delimiter splits into characters, an
    // empty one keeps the string whole; the empty string is the empty
    // array; elements equal to the third argument become NULL.
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    return call({TypeId::text_array}, name, std::move(args), [](std::span<const Value> a) -> Value {
      if (is_null(a[0])) return Null{};
      const std::string& s = std::get<std::string>(a[0]);
      std::vector<std::optional<std::string>> parts;
      if (!s.empty() && is_null(a[1])) {
        const std::vector<size_t> starts = utf8_char_starts(s);
        for (size_t i = 0; i < starts.size(); ++i) {
          parts.emplace_back(s.substr(starts[i], (i + 1 < starts.size() ? starts[i + 1] : s.size()) - starts[i]));
        }
      } else if (!s.empty()) {
        const std::string& delimiter = std::get<std::string>(a[1]);
        size_t from = 0;
        for (size_t hit; !delimiter.empty() && (hit = s.find(delimiter, from)) != std::string::npos;
             from = hit + delimiter.size()) {
          parts.emplace_back(s.substr(from, hit - from));
        }
        parts.emplace_back(s.substr(from));
      }
      if (a.size() == 3 && !is_null(a[2])) {
        for (auto& part : parts) if (part && *part == std::get<std::string>(a[2])) part.reset();
      }
      return array_literal(parts);
    }, false);
  }
  const bool known = ((name == "array_to_string" && (n == 2 || n == 3)) || (name == "cardinality" && n == 1) ||
                      (name == "array_remove" && n == 2) ||
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
  if (name == "array_remove") {
    // Every element equal to the second argument leaves (NULL: the NULLs).
    if (array_type != TypeId::text_array) {
      throw Error(SqlState::feature_not_supported, "array_remove of " + format_type(args[0]->type) + " is not supported");
    }
    args[1] = to_type(std::move(args[1]), TypeId::text, context);
    return call({TypeId::text_array}, name, std::move(args), [](std::span<const Value> a) -> Value {
      if (is_null(a[0])) return Null{};
      std::vector<std::optional<std::string>> kept;
      for (auto& element : array_elements(TypeId::text_array, std::get<std::string>(a[0]))) {
        const bool equal = is_null(a[1]) ? !element : element && *element == std::get<std::string>(a[1]);
        if (!equal) kept.push_back(std::move(element));
      }
      return array_literal(kept);
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
    const int64_t lower = array_lower_bound(array_type, std::get<std::string>(a[0]));
    return kind == 1 ? lower : lower + size - 1;
  });
}

ExprPtr make_element_array_cast(ExprPtr& array, const nlohmann::json& type_name, BindContext& context) {
  const auto element = text_held_array_element(type_name);
  if (!element) return nullptr;
  array = array_argument(std::move(array), context);
  const TypeId array_type = array->type.id;
  if (!is_array_type(array_type)) {
    throw Error(SqlState::cannot_coerce, "cannot cast type " + format_type(array->type) + " to " +
                                             format_type(SqlType{*element}) + "[]");
  }
  const SqlType source{array_element_type(array_type)}, target{*element};
  const TypeId result = *element == TypeId::int2 ? TypeId::int2_array : TypeId::text_array;
  return call({result}, "cast", pack(std::move(array)),
              [array_type, source, target](std::span<const Value> a) -> Value {
                const std::string& text = std::get<std::string>(a[0]);
                std::vector<std::optional<std::string>> out;
                for (auto& e : array_elements(array_type, text)) {
                  if (!e) {
                    out.emplace_back(std::nullopt);
                    continue;
                  }
                  // Text elements read as the target's input reads them (names for
                  // reg* types); numbers (oid, int2 elements) convert as a cast does.
                  const Value v = source.id == TypeId::text ? parse_text(target, *e)
                                                            : cast_value(parse_text(source, *e), source, target, true);
                  out.emplace_back(value_to_text(target, v));
                }
                // The bounds stay: int2vector::int2[] is [0:1]={1,3}, as in PostgreSQL.
                return array_literal(out, array_lower_bound(array_type, text));
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
  if (array_type == TypeId::name) return name_subscript(std::move(array), std::move(index), context);
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
    const int64_t i = std::get<int64_t>(a[1]) - array_lower_bound(array_type, std::get<std::string>(a[0]));
    if (i < 0 || i >= static_cast<int64_t>(elements.size()) || !elements[static_cast<size_t>(i)]) return Null{};
    const std::string& text = *elements[static_cast<size_t>(i)];
    return element.id == TypeId::text ? Value{text} : parse_text(element, text);
  });
}

}  // namespace tally::executor::scalar
