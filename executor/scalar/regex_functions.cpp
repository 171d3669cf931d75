// Regular expressions: the ~ ~* !~ !~* operators, SIMILAR TO (through
// similar_to_escape), regexp_replace, regexp_match and substring(s from
// pattern). Patterns run on std::regex's ECMAScript grammar, which agrees
// with PostgreSQL's advanced regular expressions on the common syntax
// (classes, quantifiers, groups, \d \s \w, non-greedy quantifiers);
// replacement strings follow PostgreSQL's \1 and \& rules.
#include <memory>
#include <regex>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/regex_split.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {
namespace {

const std::string& str(const Value& v) { return std::get<std::string>(v); }

// std::regex compiles a pattern by recursion, a few frames per character: a
// pattern of a few hundred thousand characters (rpad(version(), 200000))
// overflows the thread's stack. Longer patterns are refused with the error
// PostgreSQL gives a pattern beyond its own limits.
constexpr size_t kMaxPatternBytes = 16 * 1024;

// Compiled patterns per thread: a pattern is usually one constant for every row.
const std::regex& compiled(const std::string& pattern, bool icase) {
  thread_local std::unordered_map<std::string, std::unique_ptr<std::regex>> cache;
  const std::string key = (icase ? "i:" : "c:") + pattern;
  auto it = cache.find(key);
  if (it != cache.end()) return *it->second;
  if (pattern.size() > kMaxPatternBytes) {
    throw Error(SqlState::invalid_regular_expression, "invalid regular expression: regular expression is too complex");
  }
  if (cache.size() >= 64) cache.clear();
  try {
    auto flags = std::regex::ECMAScript;
    if (icase) flags |= std::regex::icase;
    auto re = std::make_unique<std::regex>(pattern, flags);
    return *cache.emplace(key, std::move(re)).first->second;
  } catch (const std::regex_error& e) {
    throw Error(SqlState::invalid_regular_expression, std::string("invalid regular expression: ") + e.what());
  }
}

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

// PostgreSQL's replacement text: \1..\9 the groups, \& the match, \\ a backslash.
void append_replacement(std::string& out, const std::string& replacement, const std::smatch& m) {
  for (size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c != '\\' || i + 1 == replacement.size()) {
      out.push_back(c);
      continue;
    }
    const char next = replacement[++i];
    if (next >= '1' && next <= '9') {
      const auto group = static_cast<size_t>(next - '0');
      if (group < m.size() && m[group].matched) out += m[group].str();
    } else if (next == '&') {
      out += m[0].str();
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
  const std::regex& re = compiled(pattern, flags.icase);
  std::string out;
  auto begin = s.cbegin();
  std::smatch m;
  auto match_flags = std::regex_constants::match_default;
  while (std::regex_search(begin, s.cend(), m, re, match_flags)) {
    out.append(begin, m[0].first);
    append_replacement(out, replacement, m);
    begin = m[0].second;
    if (!flags.global) break;
    if (m[0].length() == 0) {  // an empty match: step over one character
      if (begin == s.cend()) break;
      out.push_back(*begin++);
    }
    match_flags |= std::regex_constants::match_prev_avail;
  }
  out.append(begin, s.cend());
  return out;
}

// One character's bytes from position i of UTF-8 text.
size_t char_length_at(const std::string& s, size_t i) {
  size_t n = 1;
  while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace

std::vector<std::string> regexp_split(const std::string& s, const std::string& pattern, const std::string& flag_text) {
  const Flags flags = parse_flags(flag_text);
  if (flags.global) {
    throw Error(SqlState::invalid_parameter_value, "regexp_split_to_table() does not support the \"global\" option");
  }
  const std::regex& re = compiled(pattern, flags.icase);
  std::vector<std::string> pieces;
  size_t piece_start = 0, search = 0, previous_end = 0;
  std::smatch m;
  auto match_flags = std::regex_constants::match_default;
  while (search <= s.size() && std::regex_search(s.cbegin() + static_cast<long>(search), s.cend(), m, re, match_flags)) {
    const size_t start = static_cast<size_t>(m[0].first - s.cbegin());
    const size_t end = static_cast<size_t>(m[0].second - s.cbegin());
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
    match_flags |= std::regex_constants::match_prev_avail;
  }
  pieces.push_back(s.substr(piece_start));
  return pieces;
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

// regexp_match: the groups of the first match as text[] (the whole match when
// the pattern has no groups), NULL when nothing matches.
Value regexp_match(const std::string& s, const std::string& pattern, const Flags& flags) {
  if (flags.global) {
    throw Error(SqlState::invalid_parameter_value, "regexp_match() does not support the \"global\" option")
        .with_hint("Use the regexp_matches function instead.");
  }
  std::smatch m;
  if (!std::regex_search(s, m, compiled(pattern, flags.icase))) return Null{};
  std::string out = "{";
  if (m.size() == 1) {
    append_array_element(out, m[0].str());
  } else {
    for (size_t g = 1; g < m.size(); ++g) {
      if (g > 1) out.push_back(',');
      if (m[g].matched) append_array_element(out, m[g].str());
      else out += "NULL";
    }
  }
  out.push_back('}');
  return out;
}

// substring(s from pattern): the first group of the first match, or the match.
Value regex_substring(const std::string& s, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(s, m, compiled(pattern, false))) return Null{};
  if (m.size() > 1) return m[1].matched ? Value{m[1].str()} : Value{Null{}};
  return m[0].str();
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

}  // namespace

ExprPtr make_regex_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  if (op != "~" && op != "~*" && op != "!~" && op != "!~*") return nullptr;
  left = to_type(std::move(left), TypeId::text, context);
  right = to_type(std::move(right), TypeId::text, context);
  const bool negate = op[0] == '!', icase = op.back() == '*';
  return call({TypeId::boolean}, op, pack(std::move(left), std::move(right)), [negate, icase](std::span<const Value> a) -> Value {
    return std::regex_search(str(a[0]), compiled(str(a[1]), icase)) != negate;
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
  if (name == "regexp_matches" || name == "regexp_split_to_table" || name == "regexp_split_to_array") {
    throw Error(SqlState::feature_not_supported, "function " + name + " is not supported");
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
