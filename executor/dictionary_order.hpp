#pragma once
// The bytewise order of a text column's dictionary entries (PostgreSQL's C
// collation, as compare_values orders text). Codes are assigned in
// first-seen order, so min and max of text cannot compare codes: the engines
// take them as the minimum and maximum of each value's rank here, and the
// answer is read back by rank.
#include <cstdint>
#include <memory>
#include <vector>

#include "executor/value.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

struct DictionaryOrder {
  std::vector<int32_t> rank_of_code;
  std::vector<int32_t> code_of_rank;
};

// The order of the dictionary's entries, sorted on `threads` workers once
// per store and size: later statements over the same column (no entry added
// since) sort nothing.
std::shared_ptr<const DictionaryOrder> dictionary_order(const storage::StringDictionary& dictionary, int threads);

// A column of ranks (NULLs kept) as the entries of those ranks, a text
// column of `type` coded in `dictionary`.
Vector entries_of_ranks(const Vector& ranks, const DictionaryOrder& order,
                        std::shared_ptr<const storage::StringDictionary> dictionary, SqlType type);

}  // namespace tally::executor
