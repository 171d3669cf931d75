// Text functions that cut, pad and rearrange characters: left, right, lpad,
// rpad, translate, split_part, initcap, repeat, reverse, position, format,
// overlay, ascii. Lengths
// and positions count UTF-8 characters, as PostgreSQL's do.
#include <cctype>

#include "common/error.hpp"
#include "executor/scalar/catalog_functions.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {
namespace {

const std::string& str(const Value& v) { return std::get<std::string>(v); }
int64_t num(const Value& v) { return std::get<int64_t>(v); }

// The characters of s as views.
std::vector<std::string_view> chars_of(std::string_view s) {
  const std::vector<size_t> starts = utf8_char_starts(s);
  std::vector<std::string_view> out;
  out.reserve(starts.size());
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t end = i + 1 < starts.size() ? starts[i + 1] : s.size();
    out.push_back(s.substr(starts[i], end - starts[i]));
  }
  return out;
}

std::string join(const std::vector<std::string_view>& chars, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to && i < chars.size(); ++i) out += chars[i];
  return out;
}

// lpad/rpad: s cut or filled to `length` characters.
std::string pad(const std::string& s, int64_t length, const std::string& fill, bool left) {
  if (length <= 0) return {};
  const auto chars = chars_of(s);
  const auto n = static_cast<size_t>(length);
  if (chars.size() >= n) return join(chars, 0, n);
  const auto fill_chars = chars_of(fill);
  if (fill_chars.empty()) return s;
  std::string padding;
  for (size_t i = 0; i < n - chars.size(); ++i) padding += fill_chars[i % fill_chars.size()];
  return left ? padding + s : s + padding;
}

std::string translate(const std::string& s, const std::string& from, const std::string& to) {
  const auto f = chars_of(from), t = chars_of(to);
  std::string out;
  for (std::string_view c : chars_of(s)) {
    size_t k = 0;
    while (k < f.size() && f[k] != c) ++k;
    if (k == f.size()) out += c;        // not in `from`: kept
    else if (k < t.size()) out += t[k];  // beyond `to`: deleted
  }
  return out;
}

std::string split_part(const std::string& s, const std::string& delimiter, int64_t field) {
  if (field == 0) throw Error(SqlState::invalid_parameter_value, "field position must not be zero");
  std::vector<std::string> parts;
  if (delimiter.empty()) {
    if (!s.empty()) parts.push_back(s);
  } else if (!s.empty()) {
    size_t pos = 0, hit;
    while ((hit = s.find(delimiter, pos)) != std::string::npos) {
      parts.push_back(s.substr(pos, hit - pos));
      pos = hit + delimiter.size();
    }
    parts.push_back(s.substr(pos));
  }
  const int64_t count = static_cast<int64_t>(parts.size());
  const int64_t index = field > 0 ? field - 1 : count + field;  // negative counts from the end
  if (index < 0 || index >= count) return {};
  return parts[static_cast<size_t>(index)];
}

std::string initcap(const std::string& s) {
  // The first letter or digit of each alphanumeric run upper-cased, the rest lower-cased.
  std::string out;
  bool in_word = false;
  for (std::string_view c : chars_of(s)) {
    out += in_word ? utf8_lower(c) : utf8_upper(c);
    // Non-ASCII characters count as letters (they are, in the texts this meets).
    const auto lead = static_cast<unsigned char>(c[0]);
    in_word = lead >= 0x80 || std::isalnum(lead) != 0;
  }
  return out;
}

// PostgreSQL's quote_literal, NULL as the unquoted word (format's %L).
std::string quote_literal(const Value& v) {
  if (is_null(v)) return "NULL";
  const std::string& s = str(v);
  std::string out = s.find('\\') != std::string::npos ? "E'" : "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  return out + "'";
}

// format(formatstr, args...) with %s, %I, %L and %%; positions, flags and
// widths answer 0A000.
Value format_text(std::span<const Value> a) {
  if (is_null(a[0])) return Null{};
  const std::string& f = str(a[0]);
  std::string out;
  size_t next = 1;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    if (++i >= f.size()) throw Error(SqlState::invalid_parameter_value, "unterminated format() type specifier");
    const char type = f[i];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (type != 's' && type != 'I' && type != 'L') {
      if (std::isdigit(static_cast<unsigned char>(type)) || type == '-' || type == '*') {
        throw Error(SqlState::feature_not_supported, "format() positions and widths are not supported");
      }
      throw Error(SqlState::invalid_parameter_value, std::string("unrecognized format() type specifier \"") + type + "\"");
    }
    if (next >= a.size()) throw Error(SqlState::invalid_parameter_value, "too few arguments for format()");
    const Value& v = a[next++];
    if (type == 'L') {
      out += quote_literal(v);
    } else if (is_null(v)) {
      if (type == 'I') throw Error(SqlState::null_value_not_allowed, "null values cannot be formatted as an SQL identifier");
    } else {
      out += type == 'I' ? quote_ident(str(v)) : str(v);
    }
  }
  return out;
}

}  // namespace

ExprPtr make_text_edit_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto text_args = [&](size_t count) {
    for (size_t i = 0; i < count; ++i) args[i] = to_type(std::move(args[i]), TypeId::text, context);
  };
  auto int_arg = [&](size_t i) { args[i] = to_type(std::move(args[i]), TypeId::int4, context); };
  auto text_result = [&](ScalarFunction fn) { return call({TypeId::text}, name, std::move(args), std::move(fn)); };
  if ((name == "left" || name == "right") && n == 2) {
    text_args(1);
    int_arg(1);
    const bool left = name == "left";
    return text_result([left](std::span<const Value> a) -> Value {
      const auto chars = chars_of(str(a[0]));
      const auto total = static_cast<int64_t>(chars.size());
      int64_t k = num(a[1]);
      // A negative count keeps all but |k| characters.
      if (k < 0) k = std::max<int64_t>(total + k, 0);
      k = std::min(k, total);
      return left ? join(chars, 0, static_cast<size_t>(k)) : join(chars, static_cast<size_t>(total - k), chars.size());
    });
  }
  if ((name == "lpad" || name == "rpad") && (n == 2 || n == 3)) {
    text_args(1);
    int_arg(1);
    if (n == 3) args[2] = to_type(std::move(args[2]), TypeId::text, context);
    const bool left = name == "lpad";
    return text_result([left](std::span<const Value> a) -> Value {
      return pad(str(a[0]), num(a[1]), a.size() == 3 ? str(a[2]) : std::string(" "), left);
    });
  }
  if (name == "translate" && n == 3) {
    text_args(3);
    return text_result([](std::span<const Value> a) -> Value { return translate(str(a[0]), str(a[1]), str(a[2])); });
  }
  if (name == "split_part" && n == 3) {
    text_args(2);
    int_arg(2);
    return text_result([](std::span<const Value> a) -> Value { return split_part(str(a[0]), str(a[1]), num(a[2])); });
  }
  if (name == "initcap" && n == 1) {
    text_args(1);
    return text_result([](std::span<const Value> a) -> Value { return initcap(str(a[0])); });
  }
  if (name == "repeat" && n == 2) {
    text_args(1);
    int_arg(1);
    return text_result([](std::span<const Value> a) -> Value {
      const int64_t times = num(a[1]);
      const std::string& s = str(a[0]);
      if (times <= 0 || s.empty()) return std::string();
      if (static_cast<__int128>(times) * static_cast<__int128>(s.size()) >= (1 << 30)) {
        throw Error(SqlState::program_limit_exceeded, "requested length too large");
      }
      std::string out;
      out.reserve(s.size() * static_cast<size_t>(times));
      for (int64_t i = 0; i < times; ++i) out += s;
      return out;
    });
  }
  if (name == "reverse" && n == 1) {
    text_args(1);
    return text_result([](std::span<const Value> a) -> Value {
      const auto chars = chars_of(str(a[0]));
      std::string out;
      for (size_t i = chars.size(); i-- > 0;) out += chars[i];
      return out;
    });
  }
  if (name == "format" && n >= 1) {
    // Every argument as its text form (format's %s prints any type).
    for (auto& a : args) a = coerce_to(std::move(a), {TypeId::text}, CastContext::explicit_, context);
    return call({TypeId::text}, name, std::move(args), format_text, false);
  }
  if (name == "quote_literal" && n == 1) {
    // Any value quotes its text form (quote_literal(anyelement)).
    args[0] = coerce_to(std::move(args[0]), {TypeId::text}, CastContext::explicit_, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return quote_literal(a[0]);
    });
  }
  if (name == "overlay" && (n == 3 || n == 4) && args[0]->type.id != TypeId::bytea) {
    // overlay(s placing r from start [for count]): s's characters before
    // start, then r, then those from start + count (count: r's length).
    text_args(2);
    int_arg(2);
    if (n == 4) int_arg(3);
    return text_result([](std::span<const Value> a) -> Value {
      const auto chars = chars_of(str(a[0]));
      const int64_t start = num(a[2]);
      const int64_t count = a.size() == 4 ? num(a[3]) : static_cast<int64_t>(chars_of(str(a[1])).size());
      if (start <= 0 || count < 0) throw Error(SqlState::substring_error, "negative substring length not allowed");
      const auto at = [&](int64_t i) { return static_cast<size_t>(std::min<int64_t>(i, static_cast<int64_t>(chars.size()))); };
      return join(chars, 0, at(start - 1)) + str(a[1]) + join(chars, at(start - 1 + count), chars.size());
    });
  }
  if (name == "ascii" && n == 1) {
    // The code point of the first character; 0 for the empty string.
    text_args(1);
    return call({TypeId::int4}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const std::string& s = str(a[0]);
      if (s.empty()) return int64_t{0};
      const auto c = static_cast<unsigned char>(s[0]);
      const int extra = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
      int64_t code = extra == 0 ? c : c & (0x3F >> extra);
      for (int i = 1; i <= extra && static_cast<size_t>(i) < s.size(); ++i) code = code << 6 | (s[i] & 0x3F);
      return code;
    });
  }
  if (name == "chr" && n == 1) {
    // The character of a code point, as UTF-8 (PostgreSQL's chr in a UTF8
    // database); 0, surrogates and code points past Unicode are 54000.
    int_arg(0);
    return text_result([](std::span<const Value> a) -> Value {
      const int64_t code = num(a[0]);
      if (code == 0) throw Error(SqlState::program_limit_exceeded, "null character not permitted");
      if (code < 0 || code > 0x10FFFF) {
        throw Error(SqlState::program_limit_exceeded, "requested character too large for encoding: " + std::to_string(code));
      }
      if (code >= 0xD800 && code <= 0xDFFF) {
        throw Error(SqlState::program_limit_exceeded, "requested character not valid for encoding: " + std::to_string(code));
      }
      const auto c = static_cast<uint32_t>(code);
      std::string out;
      if (c < 0x80) {
        out.push_back(static_cast<char>(c));
      } else if (c < 0x800) {
        out += {static_cast<char>(0xC0 | c >> 6), static_cast<char>(0x80 | (c & 0x3F))};
      } else if (c < 0x10000) {
        out += {static_cast<char>(0xE0 | c >> 12), static_cast<char>(0x80 | (c >> 6 & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
      } else {
        out += {static_cast<char>(0xF0 | c >> 18), static_cast<char>(0x80 | (c >> 12 & 0x3F)),
                static_cast<char>(0x80 | (c >> 6 & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
      }
      return out;
    });
  }
  if (name == "starts_with" && n == 2) {
    text_args(2);
    return call({TypeId::boolean}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return str(a[0]).starts_with(str(a[1]));
    });
  }
  if (name == "position" && n == 2) {
    // position(sub IN s) arrives as (s, sub): strpos.
    std::vector<ExprPtr> same = std::move(args);
    return make_function("strpos", std::move(same), context);
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
