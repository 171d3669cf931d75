#pragma once
// A text column filled row by row from rows of other text columns (a CASE's
// or COALESCE's branches), held coded in a dictionary of its own: each
// distinct string is stored once and a row costs a hash probe, not a
// std::string of its own. A string per row is an allocation per row, and
// tallyd's threads share one malloc arena (common/heap_retention.hpp): a
// CASE over a URL-like column on 16 threads spent most of its time waiting
// on that arena's lock.
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "executor/value.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

class TextColumnBuilder {
 public:
  // `rows` rows of a text type, each to be set once before finish().
  TextColumnBuilder(SqlType type, size_t rows);
  // Row i takes row j of `from` (a text column, coded or not; NULL stays NULL).
  void set_from(size_t i, const Vector& from, size_t j);
  void set(size_t i, std::string_view value);
  void set_null(size_t i);
  Vector finish();

 private:
  Vector out_;
  std::shared_ptr<storage::StringDictionary> dictionary_;
  // Codes of the last coded source's entries in dictionary_ (-1: not yet):
  // a branch's coded rows look each of its entries up once. Only for a
  // source whose dictionary is not much larger than the rows.
  std::shared_ptr<const storage::StringDictionary> memo_source_;  // held: its address names it
  std::vector<int32_t> memo_;
};

}  // namespace tally::executor
