#include "executor/scalar/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <unordered_map>

#include "common/error.hpp"

namespace tally::executor::scalar {
namespace {

// PostgreSQL's words for a pattern beyond its own limits.
constexpr std::string_view kTooComplex = "invalid regular expression: regular expression is too complex";
// A pattern is compiled once per thread; a sane one is far shorter.
constexpr size_t kMaxPatternBytes = 64 * 1024;
// What one match may spend before it gives up with an error instead of
// running on: backtracking steps (PCRE2's default; some 30 ms, so that a
// cancel between rows still lands promptly), and the interpreter's heap (KiB).
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kHeapLimitKib = 256 * 1024;
// The JIT's own stack for nested groups and alternations, per thread.
constexpr size_t kJitStackBytes = size_t{8} << 20;

// The match context, JIT stack and match data a thread reuses for every match.
struct ThreadMatcher {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  pcre2_match_data* data = nullptr;
  uint32_t data_pairs = 0;

  ThreadMatcher() {
    context = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context, kMatchLimit);
    pcre2_set_heap_limit(context, kHeapLimitKib);
    jit_stack = pcre2_jit_stack_create(32 * 1024, kJitStackBytes, nullptr);
    if (jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~ThreadMatcher() {
    pcre2_match_data_free(data);
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
  }

  pcre2_match_data* data_for(uint32_t pairs) {
    if (pairs > data_pairs) {
      pcre2_match_data_free(data);
      data = pcre2_match_data_create(pairs, nullptr);
      if (!data) throw std::bad_alloc();
      data_pairs = pairs;
    }
    return data;
  }

  static ThreadMatcher& get() {
    thread_local ThreadMatcher matcher;
    return matcher;
  }
};

std::string error_text(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

std::string pcre_pattern(std::string_view are) {
  std::string out;
  out.reserve(are.size() + 8);
  bool in_bracket = false;
  size_t bracket_start = 0;  // where the bracket's members begin (after [ or [^)
  for (size_t i = 0; i < are.size(); ++i) {
    const char c = are[i];
    if (c == '\\' && i + 1 < are.size()) {
      const char next = are[++i];
      if (!in_bracket && next == 'm') out += "\\b(?=\\w)";
      else if (!in_bracket && next == 'M') out += "\\b(?<=\\w)";
      else if (!in_bracket && next == 'y') out += "\\b";
      else if (!in_bracket && next == 'Y') out += "\\B";
      else if (!in_bracket && next == 'Z') out += "\\z";
      else {
        out.push_back(c);
        out.push_back(next);
      }
      continue;
    }
    out.push_back(c);
    if (!in_bracket) {
      if (c == '[') {
        in_bracket = true;
        if (i + 1 < are.size() && are[i + 1] == '^') out.push_back(are[++i]);
        bracket_start = i + 1;
      }
    } else if (c == '[' && i + 1 < are.size() && (are[i + 1] == ':' || are[i + 1] == '.' || are[i + 1] == '=')) {
      // [:class:], [.element.], [=class=]: copied to their closing "X]".
      const char kind = are[i + 1];
      const size_t close = are.find(std::string{kind, ']'}, i + 2);
      if (close == std::string_view::npos) continue;
      out.append(are.substr(i + 1, close + 2 - (i + 1)));
      i = close + 1;
    } else if (c == ']' && i != bracket_start) {
      in_bracket = false;  // a ] first in the bracket is a member
    }
  }
  return out;
}

Regex::Regex(std::string_view pattern, bool icase) : code_(std::make_unique<Compiled>()) {
  const std::string translated = pcre_pattern(pattern);
  uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY;
  if (icase) options |= PCRE2_CASELESS;
  int code = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(), options, &code,
                              &offset, nullptr);
  if (!code_->code) {
    if (code == PCRE2_ERROR_HEAP_FAILED || code == PCRE2_ERROR_PATTERN_TOO_COMPLICATED ||
        code == PCRE2_ERROR_PARENTHESES_NEST_TOO_DEEP || code == PCRE2_ERROR_PATTERN_TOO_LARGE) {
      throw Error(SqlState::invalid_regular_expression, std::string(kTooComplex));
    }
    throw Error(SqlState::invalid_regular_expression, "invalid regular expression: " + error_text(code));
  }
  // Without the JIT (an unsupported CPU, no executable memory) the
  // interpreter runs the same pattern.
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);
  uint32_t captures = 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_CAPTURECOUNT, &captures);
  captures_ = captures;
}

Regex::~Regex() = default;

const Regex& Regex::compiled(std::string_view pattern, bool icase) {
  thread_local std::unordered_map<std::string, std::unique_ptr<Regex>> cache;
  // The pattern of the last call, whose rows mostly repeat it: found
  // without building the cache's key (an allocation per row, and the
  // process has one malloc arena for all its threads).
  thread_local const Regex* last = nullptr;
  thread_local std::string last_pattern;
  thread_local bool last_icase = false;
  if (last != nullptr && last_icase == icase && last_pattern == pattern) return *last;
  std::string key;
  key.reserve(pattern.size() + 1);
  key.push_back(icase ? 'i' : 'c');
  key.append(pattern);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (pattern.size() > kMaxPatternBytes) throw Error(SqlState::invalid_regular_expression, std::string(kTooComplex));
    if (cache.size() >= 64) cache.clear();
    auto regex = std::make_unique<Regex>(pattern, icase);
    it = cache.emplace(std::move(key), std::move(regex)).first;
  }
  last = it->second.get();
  last_pattern.assign(pattern);
  last_icase = icase;
  return *last;
}

bool Regex::search(std::string_view subject, size_t from, RegexMatch& out) const {
  ThreadMatcher& matcher = ThreadMatcher::get();
  const auto pairs = static_cast<uint32_t>(captures_ + 1);
  pcre2_match_data* data = matcher.data_for(pairs);
  int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), from, 0, data,
                       matcher.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    // The JIT's stack is fixed in size; the interpreter keeps its frames on
    // the heap, within kHeapLimitKib.
    rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), from, PCRE2_NO_JIT,
                     data, matcher.context);
  }
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
      rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_NOMEMORY) {
    throw Error(SqlState::invalid_regular_expression, std::string(kTooComplex));
  }
  if (rc < 0) throw Error(SqlState::invalid_regular_expression, "regular expression failed: " + error_text(rc));
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
  out.begins.resize(pairs);
  out.ends.resize(pairs);
  for (uint32_t g = 0; g < pairs; ++g) {
    const bool set = g < static_cast<uint32_t>(rc) && ovector[2 * g] != PCRE2_UNSET;
    out.begins[g] = set ? ovector[2 * g] : RegexMatch::npos;
    out.ends[g] = set ? ovector[2 * g + 1] : RegexMatch::npos;
  }
  return true;
}

bool Regex::search(std::string_view subject) const {
  thread_local RegexMatch ignored;
  try {
    return search(subject, 0, ignored);
  } catch (const Error&) {
    // Only whether it matches is asked: PCRE2's DFA matcher keeps no
    // backtracking frames (it cannot report groups or follow back
    // references), so a long subject that exhausted the backtracking
    // matcher's limits may still be answered.
    thread_local std::vector<int> workspace(4096);
    ThreadMatcher& matcher = ThreadMatcher::get();
    const int rc = pcre2_dfa_match(code_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0,
                                   PCRE2_DFA_SHORTEST, matcher.data_for(1), matcher.context, workspace.data(),
                                   workspace.size());
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc >= 0) return true;
    throw;
  }
}

}  // namespace tally::executor::scalar
