// Regular expressions: the ~ ~* !~ !~* operators, SIMILAR TO (through
// similar_to_escape), regexp_replace, regexp_match and substring(s from
// pattern), over executor/scalar/regex.hpp's PostgreSQL patterns on PCRE2;
// replacement strings follow PostgreSQL's \1 and \& rules.
#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/regex.hpp"
#include "executor/scalar/regex_set_functions.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {
namespace {

const std::string& str(const Value& v) { return std::get<std::string>(v); }

struct Flags {
  bool global = false, icase = false;
};

Flags parse_flags(const std::string& flags) {
  Flags f;
  for (char c : flags) {
    if (c == 'g') f.global = true;
    else if (c == 'i') f.icase = true;
    else if (c == 'c') f.icase = false;
    else throw Error(SqlState::invalid_parameter_value, std::string("invalid regular expression option: \"") + c + "\"");
  }
  return f;
}

// One character's bytes from position i of UTF-8 text.
size_t char_length_at(std::string_view s, size_t i) {
  size_t n = 1;
  while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
  return n;
}

// PostgreSQL's replacement text: \1..\9 the groups, \& the match, \\ a backslash.
void append_replacement(std::string& out, const std::string& replacement, std::string_view s, const RegexMatch& m) {
  for (size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c != '\\' || i + 1 == replacement.size()) {
      out.push_back(c);
      continue;
    }
    const char next = replacement[++i];
    if (next >= '1' && next <= '9') {
      const auto group = static_cast<size_t>(next - '0');
      if (group < m.groups() && m.matched(group)) out += m.group(s, group);
    } else if (next == '&') {
      out += m.group(s, 0);
    } else if (next == '\\') {
      out.push_back('\\');
    } else {
      out.push_back('\\');
      out.push_back(next);
    }
  }
}

std::string regexp_replace(const std::string& s, const std::string& pattern, const std::string& replacement,
                           const Flags& flags) {
  const Regex& re = Regex::compiled(pattern, flags.icase);
  std::string out;
  size_t copied = 0, search = 0;
  RegexMatch m;
  while (search <= s.size() && re.search(s, search, m)) {
    out.append(s, copied, m.begins[0] - copied);
    append_replacement(out, replacement, s, m);
    copied = search = m.ends[0];
    if (!flags.global) break;
    if (m.begins[0] == m.ends[0]) {  // an empty match: step over one character
      if (search == s.size()) break;
      const size_t step = char_length_at(s, search);
      out.append(s, search, step);
      copied = search += step;
    }
  }
  out.append(s, copied);
  return out;
}

}  // namespace

std::vector<std::string> regexp_split(const std::string& s, const std::string& pattern, const std::string& flag_text) {
  const Flags flags = parse_flags(flag_text);
  if (flags.global) {
    throw Error(SqlState::invalid_parameter_value, "regexp_split_to_table() does not support the \"global\" option");
  }
  const Regex& re = Regex::compiled(pattern, flags.icase);
  std::vector<std::string> pieces;
  size_t piece_start = 0, search = 0, previous_end = 0;
  RegexMatch m;
  while (search <= s.size() && re.search(s, search, m)) {
    const size_t start = m.begins[0], end = m.ends[0];
    // PostgreSQL's rule for degenerate matches (setup_regexp_matches).
    if (start < s.size() && end > previous_end) {
      pieces.push_back(s.substr(piece_start, start - piece_start));
      piece_start = end;
    }
    previous_end = end;
    search = end;
    if (start == end) {
      if (search >= s.size()) break;
      search += char_length_at(s, search);
    }
  }
  pieces.push_back(s.substr(piece_start));
  return pieces;
}

namespace {

std::string match_array(const std::string& s, const RegexMatch& m);

}  // namespace

std::vector<std::string> regexp_matches(const std::string& s, const std::string& pattern, const std::string& flag_text) {
  const Flags flags = parse_flags(flag_text);
  const Regex& re = Regex::compiled(pattern, flags.icase);
  std::vector<std::string> rows;
  size_t search = 0;
  RegexMatch m;
  while (search <= s.size() && re.search(s, search, m)) {
    rows.push_back(match_array(s, m));
    if (!flags.global) break;
    search = m.ends[0];
    if (m.begins[0] == m.ends[0]) {
      if (search >= s.size()) break;
      search += char_length_at(s, search);
    }
  }
  return rows;
}

namespace {

// An element of a text[] literal, quoted where array_out quotes it.
void append_array_element(std::string& out, const std::string& e) {
  bool quote = e.empty() || (e.size() == 4 && (e[0] | 0x20) == 'n' && (e[1] | 0x20) == 'u' &&
                              (e[2] | 0x20) == 'l' && (e[3] | 0x20) == 'l');
  for (char c : e) {
    if (c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || c == ' ' || c == '\t' || c == '\n' ||
        c == '\r' || c == '\v' || c == '\f') {
      quote = true;
    }
  }
  if (!quote) {
    out += e;
    return;
  }
  out.push_back('"');
  for (char c : e) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

// A match's groups as a text[] literal (the whole match when the pattern
// has no groups), as regexp_match and regexp_matches give them.
std::string match_array(const std::string& s, const RegexMatch& m) {
  std::string out = "{";
  if (m.groups() == 1) {
    append_array_element(out, std::string(m.group(s, 0)));
  } else {
    for (size_t g = 1; g < m.groups(); ++g) {
      if (g > 1) out.push_back(',');
      if (m.matched(g)) append_array_element(out, std::string(m.group(s, g)));
      else out += "NULL";
    }
  }
  out.push_back('}');
  return out;
}

// regexp_match: the first match's groups, NULL when nothing matches.
Value regexp_match(const std::string& s, const std::string& pattern, const Flags& flags) {
  if (flags.global) {
    throw Error(SqlState::invalid_parameter_value, "regexp_match() does not support the \"global\" option")
        .with_hint("Use the regexp_matches function instead.");
  }
  RegexMatch m;
  if (!Regex::compiled(pattern, flags.icase).search(s, 0, m)) return Null{};
  return match_array(s, m);
}

// substring(s from pattern): the first group of the first match, or the match.
Value regex_substring(const std::string& s, const std::string& pattern) {
  RegexMatch m;
  if (!Regex::compiled(pattern, false).search(s, 0, m)) return Null{};
  if (m.groups() > 1) return m.matched(1) ? Value{std::string(m.group(s, 1))} : Value{Null{}};
  return std::string(m.group(s, 0));
}

// PostgreSQL's similar_escape: an SQL regular expression (% _ and the
// escape character) as an anchored POSIX one.
std::string similar_to_regex(const std::string& pattern, const std::string& escape) {
  if (escape.size() > 1) {
    throw Error(SqlState::invalid_escape_sequence, "invalid escape string")
        .with_hint("Escape string must be empty or one character.");
  }
  std::string out = "^(?:";
  bool escaped = false, in_bracket = false;
  for (char c : pattern) {
    if (escaped) {
      if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out.push_back('\\');
      out.push_back(c);
      escaped = false;
    } else if (!escape.empty() && c == escape[0]) {
      escaped = true;
    } else if (in_bracket) {
      if (c == ']') in_bracket = false;
      if (c == '\\') out.push_back('\\');
      out.push_back(c);
    } else if (c == '[') {
      in_bracket = true;
      out.push_back(c);
    } else if (c == '%') {
      out += ".*";
    } else if (c == '_') {
      out.push_back('.');
    } else if (c == '(') {
      out += "(?:";
    } else if (c == '\\' || c == '.' || c == '^' || c == '$') {
      out.push_back('\\');
      out.push_back(c);
    } else {
      out.push_back(c);
    }
  }
  if (escaped) {
    throw Error(SqlState::invalid_escape_sequence, "invalid escape string")
        .with_hint("Escape string must be empty or one character.");
  }
  return out + ")$";
}

// PostgreSQL 15's regexp_count, regexp_instr, regexp_like and regexp_substr:
// positions count characters from 1; `start` is where the search begins.

int32_t checked_parameter(const Value& v, const char* name, int32_t least, int32_t most = INT32_MAX) {
  const auto x = static_cast<int32_t>(std::get<int64_t>(v));
  if (x < least || x > most) {
    throw Error(SqlState::invalid_parameter_value,
                std::string("invalid value for parameter \"") + name + "\": " + std::to_string(x));
  }
  return x;
}

Flags flags_without_global(const Value* flags, const char* function) {
  const Flags f = flags == nullptr ? Flags{} : parse_flags(str(*flags));
  if (f.global) {
    throw Error(SqlState::invalid_parameter_value,
                std::string(function) + " does not support the \"global\" option");
  }
  return f;
}

// Byte offset of character `index` (0-based) of s; past the end where s has fewer.
size_t byte_of_char(std::string_view s, int64_t index) {
  size_t at = 0;
  for (; index > 0 && at < s.size(); --index) at += char_length_at(s, at);
  return index > 0 ? s.size() + 1 : at;
}

int64_t char_of_byte(std::string_view s, size_t byte) {
  int64_t n = 0;
  for (size_t at = 0; at < byte; at += char_length_at(s, at)) ++n;
  return n;
}

// Every match from byte `from` on, empty ones included, as PostgreSQL's
// setup_regexp_matches finds them for these functions.
std::vector<RegexMatch> matches_from(const std::string& s, const Regex& re, size_t from) {
  std::vector<RegexMatch> found;
  size_t search = from;
  RegexMatch m;
  while (search <= s.size() && re.search(s, search, m)) {
    found.push_back(m);
    search = m.ends[0];
    if (m.begins[0] == m.ends[0]) {
      if (search >= s.size()) break;
      search += char_length_at(s, search);
    }
  }
  return found;
}

}  // namespace

ExprPtr make_regex_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  if (op != "~" && op != "~*" && op != "!~" && op != "!~*") return nullptr;
  left = to_type(std::move(left), TypeId::text, context);
  right = to_type(std::move(right), TypeId::text, context);
  const bool negate = op[0] == '!', icase = op.back() == '*';
  return call({TypeId::boolean}, op, pack(std::move(left), std::move(right)), [negate, icase](std::span<const Value> a) -> Value {
    return Regex::compiled(str(a[1]), icase).search(str(a[0])) != negate;
  });
}

ExprPtr make_regex_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto all_text = [&] {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
  };
  if (name == "regexp_replace" && (n == 3 || n == 4)) {
    if (n == 4 && numeric_rank(args[3]->type.id) != 0) {
      throw Error(SqlState::feature_not_supported, "regexp_replace with a start position is not supported");
    }
    all_text();
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return regexp_replace(str(a[0]), str(a[1]), str(a[2]), a.size() == 4 ? parse_flags(str(a[3])) : Flags{});
    });
  }
  if (name == "regexp_match" && (n == 2 || n == 3)) {
    all_text();
    return call({TypeId::text_array}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return regexp_match(str(a[0]), str(a[1]), a.size() == 3 ? parse_flags(str(a[2])) : Flags{});
    });
  }
  if (name == "substring" && n == 2) {
    all_text();
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return regex_substring(str(a[0]), str(a[1]));
    });
  }
  if (name == "substring" && n == 3) {
    throw Error(SqlState::feature_not_supported, "substring(... SIMILAR ... ESCAPE ...) is not supported");
  }
  if (name == "similar_to_escape" && (n == 1 || n == 2)) {
    all_text();
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return similar_to_regex(str(a[0]), a.size() == 2 ? str(a[1]) : std::string("\\"));
    });
  }
  if (name == "regexp_split_to_array" && (n == 2 || n == 3)) {
    all_text();
    return call({TypeId::text_array}, name, std::move(args), [](std::span<const Value> a) -> Value {
      std::string out = "{";
      bool first = true;
      for (const auto& piece : regexp_split(str(a[0]), str(a[1]), a.size() == 3 ? str(a[2]) : std::string())) {
        if (!first) out += ',';
        append_array_element(out, piece);
        first = false;
      }
      return out + "}";
    });
  }
  if (name == "regexp_like" && (n == 2 || n == 3)) {
    all_text();
    return call({TypeId::boolean}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const Flags f = flags_without_global(a.size() == 3 ? &a[2] : nullptr, "regexp_like()");
      return Regex::compiled(str(a[1]), f.icase).search(str(a[0]));
    });
  }
  // regexp_count(s, p [, start [, flags]]), regexp_instr(s, p [, start [, n [, endoption [, flags [, subexpr]]]]]),
  // regexp_substr(s, p [, start [, n [, flags [, subexpr]]]]).
  const bool count = name == "regexp_count", instr = name == "regexp_instr", substr = name == "regexp_substr";
  if ((count && n >= 2 && n <= 4) || (instr && n >= 2 && n <= 7) || (substr && n >= 2 && n <= 6)) {
    const size_t flags_at = count ? 3 : instr ? 5 : 4;
    for (size_t i = 0; i < n; ++i) {
      args[i] = to_type(std::move(args[i]), i < 2 || i == flags_at ? TypeId::text : TypeId::int4, context);
    }
    const SqlType type = count || instr ? SqlType{TypeId::int4} : SqlType{TypeId::text};
    return call(type, name, std::move(args), [count, instr, flags_at](std::span<const Value> a) -> Value {
      const char* function = count ? "regexp_count()" : instr ? "regexp_instr()" : "regexp_substr()";
      const std::string& s = str(a[0]);
      const int32_t start = a.size() > 2 ? checked_parameter(a[2], "start", 1) : 1;
      const int32_t nth = !count && a.size() > 3 ? checked_parameter(a[3], "n", 1) : 1;
      const int32_t end_option = instr && a.size() > 4 ? checked_parameter(a[4], "endoption", 0, 1) : 0;
      const Flags f = flags_without_global(a.size() > flags_at ? &a[flags_at] : nullptr, function);
      const int32_t subexpr = !count && a.size() > flags_at + 1 ? checked_parameter(a[flags_at + 1], "subexpr", 0) : 0;
      const Regex& re = Regex::compiled(str(a[1]), f.icase);
      const std::vector<RegexMatch> found = matches_from(s, re, byte_of_char(s, start - 1));
      if (count) return static_cast<int64_t>(found.size());
      const Value none = instr ? Value{int64_t{0}} : Value{Null{}};
      if (static_cast<size_t>(nth) > found.size()) return none;
      const RegexMatch& m = found[static_cast<size_t>(nth) - 1];
      const auto group = static_cast<size_t>(subexpr);
      if (group >= m.groups() || !m.matched(group)) return none;
      if (!instr) return std::string(m.group(s, group));
      return char_of_byte(s, end_option == 1 ? m.ends[group] : m.begins[group]) + 1;
    });
  }
  if (name == "regexp_matches" || name == "regexp_split_to_table" || name == "regexp_split_to_array") {
    throw Error(SqlState::feature_not_supported, "function " + name + " is not supported");
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
