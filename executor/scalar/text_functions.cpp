// Text functions (lower/upper, length, substring, concat, replace, trim,
// strpos) and the UTF-8 case mapping and LIKE matching they and the
// engines share.
#include <algorithm>
#include <clocale>
#include <cwctype>
#include <locale.h>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/substring_search.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/value_codec.hpp"
#include "executor/vector_operand.hpp"

namespace tally::executor {

namespace {

// UTF-8 decoding for character-based text functions.
size_t utf8_char_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// Characters of UTF-8 text, counted as char_offsets steps through them.
size_t char_count(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(static_cast<unsigned char>(s[i]))) ++n;
  return n;
}

std::vector<size_t> char_offsets(std::string_view s) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(static_cast<unsigned char>(s[i]))) offsets.push_back(i);
  return offsets;
}

uint32_t decode(std::string_view s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = std::min(utf8_char_length(c), s.size() - i);
  uint32_t cp = n == 1 ? c : (c & (0xFF >> (n + 1)));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

void encode(std::string& out, uint32_t cp) {
  if (cp < 0x80) out.push_back(static_cast<char>(cp));
  else if (cp < 0x800) { out.push_back(static_cast<char>(0xC0 | (cp >> 6))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
  else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

locale_t utf8_locale() {
  // PostgreSQL's lower()/upper() follow the database's LC_CTYPE (C.UTF-8 on
  // Debian's initdb default): full Unicode simple case mapping.
  static locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    return l;
  }();
  return loc;
}

std::string map_case(std::string_view s, bool upper) {
  std::string out;
  out.reserve(s.size());
  locale_t loc = utf8_locale();
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(upper ? (c >= 'a' && c <= 'z' ? c - 32 : c) : (c >= 'A' && c <= 'Z' ? c + 32 : c)));
      ++i;
      continue;
    }
    uint32_t cp = decode(s, i);
    if (loc != static_cast<locale_t>(0)) {
      cp = static_cast<uint32_t>(upper ? towupper_l(static_cast<wint_t>(cp), loc) : towlower_l(static_cast<wint_t>(cp), loc));
    }
    encode(out, cp);
  }
  return out;
}

bool like_impl(std::string_view t, size_t ti, std::string_view p, size_t pi, bool ci) {
  while (pi < p.size()) {
    const char pc = p[pi];
    if (pc == '%') {
      while (pi < p.size() && p[pi] == '%') ++pi;
      if (pi == p.size()) return true;
      for (size_t k = ti; k <= t.size(); k += (k < t.size() ? utf8_char_length(static_cast<unsigned char>(t[k])) : 1)) {
        if (like_impl(t, k, p, pi, ci)) return true;
        if (k == t.size()) break;
      }
      return false;
    }
    if (ti >= t.size()) return false;
    if (pc == '_') {
      ti += utf8_char_length(static_cast<unsigned char>(t[ti]));
      ++pi;
      continue;
    }
    size_t plen = 1;
    if (pc == '\\') {
      ++pi;
      if (pi >= p.size()) {
        throw Error(SqlState::invalid_escape_sequence, "LIKE pattern must not end with escape character");
      }
    }
    plen = utf8_char_length(static_cast<unsigned char>(p[pi]));
    const size_t tlen = utf8_char_length(static_cast<unsigned char>(t[ti]));
    if (plen != tlen || t.compare(ti, tlen, p.substr(pi, plen)) != 0) {
      if (!ci) return false;
      if (map_case(t.substr(ti, tlen), false) != map_case(p.substr(pi, plen), false)) return false;
    }
    ti += tlen;
    pi += plen;
  }
  return ti == t.size();
}

}  // namespace

std::string utf8_lower(std::string_view s) { return map_case(s, false); }
std::string utf8_upper(std::string_view s) { return map_case(s, true); }
LikePattern::LikePattern(std::string_view pattern, bool case_insensitive)
    : pattern_(pattern), case_insensitive_(case_insensitive) {
  runs_only_ = !case_insensitive && pattern.find_first_of("_\\") == std::string_view::npos;
  if (!runs_only_) return;
  size_t at = pattern.find('%');
  percent_ = at != std::string_view::npos;
  head_ = pattern.substr(0, at);
  while (percent_) {
    const size_t next = pattern.find('%', at + 1);
    if (next == std::string_view::npos) {
      tail_ = pattern.substr(at + 1);
      break;
    }
    if (next > at + 1) middle_.emplace_back(pattern.substr(at + 1, next - at - 1));
    at = next;
  }
}

// A case-sensitive pattern of literal runs and '%' only (the usual
// '%word%other%' search) is matched with substring searches: the leftmost
// match of each run leaves the most text for the runs after it, so the
// greedy search finds a match whenever one exists (as like_impl's
// backtracking does, without trying every position).
bool LikePattern::matches(std::string_view t) const {
  if (!runs_only_) return like_impl(t, 0, pattern_, 0, case_insensitive_);
  if (!percent_) return t == head_;
  if (!t.starts_with(head_)) return false;
  size_t ti = head_.size();
  for (const std::string& run : middle_) {
    const size_t found = find_substring(t, run, ti);
    if (found == std::string_view::npos) return false;
    ti = found + run.size();
  }
  return t.size() >= ti + tail_.size() && t.ends_with(tail_);
}

bool like_match(std::string_view text, std::string_view pattern, bool case_insensitive) {
  return LikePattern(pattern, case_insensitive).matches(text);
}

namespace {

// The exclusive, 1-based character end of substring(s, start[, count]):
// PostgreSQL's error for a negative count.
int64_t substring_end(int64_t start, const Value* count) {
  if (count == nullptr) return INT64_MAX;
  const int64_t n = std::get<int64_t>(*count);
  if (n < 0) throw Error(SqlState::substring_error, "negative substring length not allowed");
  return start + n;
}

// Characters [start, end) of s, 1-based, clipped to the string. An ASCII
// string's characters are its bytes; any other is walked character by
// character.
std::string_view substring_of(std::string_view s, int64_t start, int64_t end) {
  const int64_t from = std::max<int64_t>(start, 1);
  if (from >= end) return {};
  const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    const int64_t size = static_cast<int64_t>(s.size());
    const int64_t to = std::min<int64_t>(end, size + 1);
    if (from >= to) return {};
    return s.substr(static_cast<size_t>(from - 1), static_cast<size_t>(to - from));
  }
  const auto offsets = char_offsets(s);
  const int64_t chars = static_cast<int64_t>(offsets.size());
  const int64_t to = std::min<int64_t>(end, chars + 1);
  if (from >= to) return {};
  const size_t b = offsets[static_cast<size_t>(from - 1)];
  const size_t e = to - 1 < chars ? offsets[static_cast<size_t>(to - 1)] : s.size();
  return s.substr(b, e - b);
}

}  // namespace

namespace scalar {

std::vector<size_t> utf8_char_starts(std::string_view s) { return char_offsets(s); }

ExprPtr make_text_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto type_of = [&](size_t i) { return args[i]->type; };
  auto unknown_to_text = [&] {
    for (auto& a : args) if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
  };
  if ((name == "lower" || name == "upper") && n == 1) {
    unknown_to_text();
    if (!is_text_kind(type_of(0).id)) throw no_function(name, args);
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    const bool upper = name == "upper";
    return call({TypeId::text}, name, std::move(args), [upper](std::span<const Value> a) -> Value {
      return upper ? utf8_upper(std::get<std::string>(a[0])) : utf8_lower(std::get<std::string>(a[0]));
    });
  }
  if (name == "bit_length" && n == 1 && type_of(0).id != TypeId::bytea) {
    // bit_length(text): a char(n) argument loses its padding in the cast.
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    return call({TypeId::int4}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return static_cast<int64_t>(std::get<std::string>(a[0]).size()) * 8;
    });
  }
  if ((name == "length" || name == "char_length" || name == "character_length" || name == "octet_length") && n == 1) {
    unknown_to_text();
    if (!is_text_kind(type_of(0).id)) throw no_function(name, args);
    const bool octets = name == "octet_length";
    const bool bpchar = type_of(0).id == TypeId::bpchar;
    auto length = [octets, bpchar](std::string_view s) {
      if (bpchar && !octets) while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
      return static_cast<int64_t>(octets ? s.size() : char_count(s));
    };
    ExprPtr e = call({TypeId::int4}, name, std::move(args), [length](std::span<const Value> a) -> Value {
      return length(std::get<std::string>(a[0]));
    });
    // Over a whole text column (avg(length(URL))): each row's string is
    // measured where it is, without a Value per row.
    if (auto* f = dynamic_cast<FunctionExpr*>(e.get()); f != nullptr && f->strict) {
      f->batch = [length](std::span<const Vector* const> a, size_t rows, Vector& out) -> bool {
        const Vector& text = *a[0];
        if (!text.coded() && text.texts.size() < rows) return false;
        out.resize(rows);
        if (!text.nulls.empty()) out.nulls.assign(rows, 0);
        for (size_t i = 0; i < rows; ++i) {
          if (text.null_at(i)) out.nulls[i] = 1;
          else out.ints[i] = length(text.text_at(i));
        }
        return true;
      };
    }
    return e;
  }
  if ((name == "substr" || name == "substring") && (n == 2 || n == 3)) {
    // substring(s from 'pattern') and substring(s similar p escape e): regular expressions.
    if (name == "substring" && (type_of(1).id == TypeId::unknown || is_text_kind(type_of(1).id))) return nullptr;
    unknown_to_text();
    if (!is_text_kind(type_of(0).id)) throw no_function(name, args);
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    args[1] = to_type(std::move(args[1]), TypeId::int4, context);
    if (n == 3) args[2] = to_type(std::move(args[2]), TypeId::int4, context);
    ExprPtr e = call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const int64_t start = std::get<int64_t>(a[1]);
      return std::string(
          substring_of(std::get<std::string>(a[0]), start, substring_end(start, a.size() == 3 ? &a[2] : nullptr)));
    });
    // Over a whole text column (`substring(c_phone from 1 for 2)` on every
    // row of TPC-H Q22): each row's string is read where it is and cut
    // without a Value or a table of character offsets per row.
    if (auto* f = dynamic_cast<FunctionExpr*>(e.get()); f != nullptr && f->strict) {
      f->batch_takes_constants = true;
      f->batch = [](std::span<const Vector* const> a, size_t rows, Vector& out) -> bool {
        const Vector& text = *a[0];
        if (!text.coded() && text.texts.size() < rows && !is_constant_operand(text, rows)) return false;
        out.resize(rows);
        const bool nulls = std::any_of(a.begin(), a.end(), [](const Vector* v) { return !v->nulls.empty(); });
        if (nulls) out.nulls.assign(rows, 0);
        auto row_of = [rows](const Vector& v, size_t i) { return is_constant_operand(v, rows) ? 0 : i; };
        for (size_t i = 0; i < rows; ++i) {
          if (nulls && std::any_of(a.begin(), a.end(), [&](const Vector* v) { return v->null_at(row_of(*v, i)); })) {
            out.nulls[i] = 1;
            continue;
          }
          const int64_t start = a[1]->ints[row_of(*a[1], i)];
          int64_t end = INT64_MAX;
          if (a.size() == 3) {
            const int64_t count = a[2]->ints[row_of(*a[2], i)];
            if (count < 0) throw Error(SqlState::substring_error, "negative substring length not allowed");
            end = start + count;
          }
          out.texts[i] = substring_of(text.text_at(row_of(text, i)), start, end);
        }
        return true;
      };
    }
    return e;
  }
  if ((name == "concat" && n >= 1) || (name == "concat_ws" && n >= 2)) {
    // Each argument as its type's output function prints it (true is `t`,
    // where true::text is `true`; char(n) keeps its padding); NULLs are
    // skipped. concat_ws puts its first argument between them, and is NULL
    // when that is.
    const bool separated = name == "concat_ws";
    if (separated) args[0] = to_type(std::move(args[0]), TypeId::text, context);
    std::vector<SqlType> types;
    for (auto& a : args) {
      if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
      types.push_back(a->type);
    }
    return call({TypeId::text}, name, std::move(args), [types, separated](std::span<const Value> a) -> Value {
      if (separated && is_null(a[0])) return Null{};
      std::string out;
      bool first = true;
      for (size_t i = separated ? 1 : 0; i < a.size(); ++i) {
        if (is_null(a[i])) continue;
        if (separated && !first) out += std::get<std::string>(a[0]);
        first = false;
        if (types[i].id == TypeId::text || types[i].id == TypeId::varchar) out += std::get<std::string>(a[i]);
        else append_value_text(out, types[i], a[i]);
      }
      return out;
    }, false);
  }
  if (name == "replace" && n == 3) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      std::string s = std::get<std::string>(a[0]);
      const std::string& from = std::get<std::string>(a[1]);
      const std::string& to = std::get<std::string>(a[2]);
      if (from.empty()) return s;
      std::string out;
      size_t pos = 0, hit;
      while ((hit = s.find(from, pos)) != std::string::npos) { out += s.substr(pos, hit - pos) + to; pos = hit + from.size(); }
      return out + s.substr(pos);
    });
  }
  if ((name == "btrim" || name == "ltrim" || name == "rtrim") && (n == 1 || n == 2)) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    const bool left = name != "rtrim", right = name != "ltrim";
    return call({TypeId::text}, name, std::move(args), [left, right](std::span<const Value> a) -> Value {
      std::string s = std::get<std::string>(a[0]);
      const std::string set = a.size() == 2 ? std::get<std::string>(a[1]) : " ";
      size_t b = 0, e = s.size();
      if (left) while (b < e && set.find(s[b]) != std::string::npos) ++b;
      if (right) while (e > b && set.find(s[e - 1]) != std::string::npos) --e;
      return s.substr(b, e - b);
    });
  }
  if (name == "strpos" && n == 2) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    return call({TypeId::int4}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const std::string& s = std::get<std::string>(a[0]);
      const size_t hit = s.find(std::get<std::string>(a[1]));
      if (hit == std::string::npos) return int64_t{0};
      return static_cast<int64_t>(char_offsets(std::string_view(s).substr(0, hit)).size() + 1);
    });
  }
  return nullptr;
}

}  // namespace scalar

}  // namespace tally::executor
