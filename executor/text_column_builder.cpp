#include "executor/text_column_builder.hpp"

namespace tally::executor {

TextColumnBuilder::TextColumnBuilder(SqlType type, size_t rows)
    : out_(type), dictionary_(std::make_shared<storage::StringDictionary>()) {
  out_.dictionary = dictionary_;  // coded from the start: resize sizes `codes`
  out_.resize(rows);
}

void TextColumnBuilder::set_null(size_t i) { out_.set_null(i); }

void TextColumnBuilder::set(size_t i, std::string_view value) {
  if (!out_.nulls.empty()) out_.nulls[i] = 0;
  out_.codes[i] = dictionary_->intern(value);
}

void TextColumnBuilder::set_from(size_t i, const Vector& from, size_t j) {
  if (from.null_at(j)) {
    set_null(i);
    return;
  }
  if (!from.coded()) {
    set(i, from.texts[j]);
    return;
  }
  const auto entries = static_cast<size_t>(from.dictionary->size());
  if (entries > 4 * out_.count + 64) {
    set(i, from.text_at(j));
    return;
  }
  if (from.dictionary != memo_source_) {
    memo_source_ = from.dictionary;
    memo_.assign(entries, -1);
  }
  int32_t& code = memo_[static_cast<size_t>(from.codes[j])];
  if (code < 0) code = dictionary_->intern(from.text_at(j));
  if (!out_.nulls.empty()) out_.nulls[i] = 0;
  out_.codes[i] = code;
}

Vector TextColumnBuilder::finish() {
  memo_source_.reset();
  if (dictionary_->size() == 0) {
    // Every row NULL: held as strings, since a reader may index a table
    // by the NULL rows' code 0, which an empty dictionary lacks.
    out_.codes = {};
    out_.dictionary.reset();
    out_.texts.assign(out_.count, std::string());
  }
  return std::move(out_);
}

}  // namespace tally::executor
