#include "executor/row_top_n.hpp"

#include <algorithm>
#include <memory>

#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/dictionary_order.hpp"

namespace tally::executor {

namespace {

// Below this many rows a sort of all of them is as quick.
constexpr size_t kTopNMinRows = 4096;
// The candidates' selection pays when k is at most this fraction of the rows.
constexpr size_t kTopNRowsPerKept = 8;

int compare_keys(const std::vector<SortColumn>& keys, uint32_t a, uint32_t b) {
  for (const auto& c : keys) {
    if (const int r = compare_sort_values(*c.values, a, *c.values, b, c.descending, c.nulls_first)) return r;
  }
  return 0;
}

// A key of integers (integer-like types and booleans, held as int64s), or
// of a coded text column's codes by their rank in the dictionary's bytewise
// order, compared inline as compare_sort_values compares them: the counts
// and bigint keys of `GROUP BY WatchID, ClientIP ORDER BY count(*) DESC`
// over twenty million groups, `ORDER BY SearchPhrase LIMIT 10` over a
// chunk's rows, without a dispatch on the type (or a string comparison) per
// comparison.
struct IntegerKey {
  const int64_t* values;  // nullptr: codes
  const int32_t* codes;
  const int32_t* rank_of_code;
  const uint8_t* nulls;  // nullptr: none
  bool descending;
  bool nulls_first;
};

// A dictionary is ranked (sorted, then cached for later statements) only
// where it has at most this many entries per row compared.
constexpr size_t kRankedEntriesPerRow = 2;

std::optional<std::vector<IntegerKey>> integer_keys(const std::vector<SortColumn>& keys, size_t rows, int threads,
                                                    std::vector<std::shared_ptr<const DictionaryOrder>>& orders) {
  std::vector<IntegerKey> out;
  for (const SortColumn& c : keys) {
    const Vector& v = *c.values;
    const uint8_t* nulls = v.nulls.empty() ? nullptr : v.nulls.data();
    const Physical p = physical_of(v.type.id);
    if ((p == Physical::integer || p == Physical::boolean) && !v.avg_parts) {
      out.push_back({v.int_data(), nullptr, nullptr, nulls, c.descending, c.nulls_first});
      continue;
    }
    if (p != Physical::text || !v.coded() || v.dictionary->size() == 0 ||
        static_cast<size_t>(v.dictionary->size()) > rows * kRankedEntriesPerRow) {
      return std::nullopt;
    }
    orders.push_back(dictionary_order(*v.dictionary, threads));
    out.push_back({nullptr, v.codes.data(), orders.back()->rank_of_code.data(), nulls, c.descending, c.nulls_first});
  }
  return out;
}

int compare_integer_keys(const std::vector<IntegerKey>& keys, uint32_t a, uint32_t b) {
  for (const IntegerKey& k : keys) {
    if (k.nulls != nullptr) {
      const bool na = k.nulls[a] != 0, nb = k.nulls[b] != 0;
      if (na || nb) {
        if (na && nb) continue;
        return na == k.nulls_first ? -1 : 1;
      }
    }
    const int64_t x = k.values != nullptr ? k.values[a] : k.rank_of_code[k.codes[a]];
    const int64_t y = k.values != nullptr ? k.values[b] : k.rank_of_code[k.codes[b]];
    if (x != y) return (x < y) != k.descending ? -1 : 1;
  }
  return 0;
}

// top_n_candidates with `compare` (-1, 0, 1) as the order of two rows.
template <class Compare>
std::optional<std::vector<uint32_t>> candidates_by(size_t rows, size_t k, int threads, const Compare& compare) {
  const auto less = [&compare](uint32_t a, uint32_t b) {
    const int r = compare(a, b);
    return r != 0 ? r < 0 : a < b;
  };
  // Each part's k first rows, in a heap whose top is the last of them.
  const int parts = std::max(1, threads);
  std::vector<std::vector<uint32_t>> firsts(static_cast<size_t>(parts));
  cpu::parallel_for(parts, rows, [&](int part, size_t begin, size_t end) {
    std::vector<uint32_t>& heap = firsts[static_cast<size_t>(part)];
    heap.reserve(k + 1);
    for (size_t r = begin; r < end; ++r) {
      tick_on_this_thread();
      keep_first(heap, k, static_cast<uint32_t>(r), less);
    }
  });
  std::vector<uint32_t> candidates;
  for (const auto& mine : firsts) candidates.insert(candidates.end(), mine.begin(), mine.end());
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<long>(k - 1), candidates.end(), less);
  const uint32_t bound = candidates[k - 1];
  // Every row not after the bound, ties of it included.
  std::vector<std::vector<uint32_t>> kept(static_cast<size_t>(parts));
  cpu::parallel_for(parts, rows, [&](int part, size_t begin, size_t end) {
    std::vector<uint32_t>& mine = kept[static_cast<size_t>(part)];
    for (size_t r = begin; r < end; ++r) {
      if (compare(static_cast<uint32_t>(r), bound) <= 0) mine.push_back(static_cast<uint32_t>(r));
    }
  });
  std::vector<uint32_t> out;
  for (const auto& mine : kept) out.insert(out.end(), mine.begin(), mine.end());
  if (out.size() > rows / kTopNRowsPerKept) return std::nullopt;  // ties everywhere: sort them all
  return out;
}

}  // namespace

std::optional<std::vector<uint32_t>> top_n_candidates(size_t rows, const std::vector<SortColumn>& keys, size_t k,
                                                      int threads) {
  if (k == 0 || rows < kTopNMinRows || k > rows / kTopNRowsPerKept || keys.empty()) return std::nullopt;
  std::vector<std::shared_ptr<const DictionaryOrder>> orders;  // the ranks the keys read
  if (const auto ints = integer_keys(keys, rows, threads, orders)) {
    return candidates_by(rows, k, threads, [&ints](uint32_t a, uint32_t b) { return compare_integer_keys(*ints, a, b); });
  }
  return candidates_by(rows, k, threads, [&keys](uint32_t a, uint32_t b) { return compare_keys(keys, a, b); });
}

}  // namespace tally::executor
