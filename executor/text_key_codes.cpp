#include "executor/text_key_codes.hpp"

#include <vector>

namespace tally::executor {

TextKeyCodes::TextKeyCodes() {
  // Readers look codes up with find_newest while one writer interns.
  local_.make_newest();
}

int64_t TextKeyCodes::local_code(std::string_view value) {
  const uint64_t h = storage::StringDictionary::hash(value);
  int32_t code = local_.find_newest(value, h);
  if (code < 0) {
    std::lock_guard lock(intern_mutex_);
    code = local_.intern(value, h);
    local_used_.store(true, std::memory_order_relaxed);
  }
  return source_size_ + static_cast<int64_t>(code);
}

void TextKeyCodes::code(const Vector& v, int64_t* out) {
  std::call_once(decided_, [&] {
    if (v.coded()) {
      source_ = v.dictionary;
      source_size_ = source_->size();
    }
  });
  const size_t n = v.count;
  if (source_ && v.coded() && v.dictionary == source_) {
    for (size_t r = 0; r < n; ++r) {
      if (!v.null_at(r)) out[r] = v.codes[r];
    }
    return;
  }
  // A code of the source's own (a coded value of another Vector of it, or
  // the same string reached another way) is preferred: one string, one code.
  auto code_of = [&](std::string_view value) {
    const int32_t known = source_ ? source_->find(value) : -1;
    return known >= 0 ? known : local_code(value);
  };
  if (v.coded() && static_cast<size_t>(v.dictionary->size()) <= n) {
    // Another dictionary (an expression's results, coded per chunk): each
    // of its entries is looked up once, when a row first holds it.
    std::vector<int64_t> codes(static_cast<size_t>(v.dictionary->size()), -1);
    for (size_t r = 0; r < n; ++r) {
      if (v.null_at(r)) continue;
      int64_t& code = codes[static_cast<size_t>(v.codes[r])];
      if (code < 0) code = code_of(v.text_at(r));
      out[r] = code;
    }
    return;
  }
  for (size_t r = 0; r < n; ++r) {
    if (!v.null_at(r)) out[r] = code_of(v.text_at(r));
  }
}

void TextKeyCodes::adopt(std::shared_ptr<const storage::StringDictionary> source) {
  std::call_once(decided_, [&] {
    source_ = std::move(source);
    source_size_ = source_ ? source_->size() : 0;
  });
}

std::shared_ptr<const storage::StringDictionary> TextKeyCodes::dictionary() const {
  if (!local_used_.load(std::memory_order_relaxed)) return source_;
  // The local strings after the source's entries, under the codes given:
  // the source's entries copied (same codes), then the local ones interned
  // in their order (none is in the source, so each gets the next code).
  auto merged = std::make_shared<storage::StringDictionary>(
      source_ ? storage::StringDictionary::borrow(*source_) : storage::StringDictionary());
  for (int32_t c = 0; c < local_.size(); ++c) merged->intern(local_.at(c));
  return merged;
}

}  // namespace tally::executor
