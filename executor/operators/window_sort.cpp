#include "executor/operators/window_sort.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "common/memory_tracker.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor {

namespace {

// NaN sorts above every number and -0 equals 0, as in PostgreSQL's float comparison.
int compare_floats(double a, double b) {
  if (a < b) return -1;
  if (a > b) return 1;
  if (std::isnan(a)) return std::isnan(b) ? 0 : 1;
  return std::isnan(b) ? -1 : 0;
}

}  // namespace

int compare_window_values(const Vector& va, size_t a, const Vector& vb, size_t b, bool descending, bool nulls_first) {
  const bool na = va.null_at(a), nb = vb.null_at(b);
  if (na || nb) {
    if (na && nb) return 0;
    return na == nulls_first ? -1 : 1;
  }
  int r;
  switch (physical_of(va.type.id)) {
    case Physical::boolean:
    case Physical::integer: {
      const int64_t x = va.int_data()[a], y = vb.int_data()[b];
      r = x < y ? -1 : (x > y ? 1 : 0);
      break;
    }
    case Physical::floating: r = compare_floats(va.floats[a], vb.floats[b]); break;
    case Physical::text: r = va.text_at(a).compare(vb.text_at(b)); r = r < 0 ? -1 : (r > 0 ? 1 : 0); break;
    default: r = compare_values(va.get(a), vb.get(b));
  }
  return descending ? -r : r;
}

namespace {

bool word_sortable(const Vector& v) {
  const Physical p = physical_of(v.type.id);
  return p == Physical::integer || p == Physical::boolean || p == Physical::floating;
}

int compare_column(const WindowSortColumn& c, uint32_t a, uint32_t b) {
  return compare_window_values(*c.values, a, *c.values, b, c.descending, c.nulls_first);
}

int compare_rows(const std::vector<WindowSortColumn>& columns, uint32_t a, uint32_t b) {
  for (const auto& c : columns) {
    if (int r = compare_column(c, a, b)) return r;
  }
  return 0;
}

// Rows below which a sort stays on one thread: splitting it would cost
// more than it saves.
constexpr size_t kParallelSortRows = size_t{1} << 16;

// std::sort of [data, data + n) on `threads` workers: each sorts a run of
// its own, then the runs are merged pairwise, the merges of one round side
// by side. `less` is a strict total order (rows break every tie), so the
// result is the one std::sort gives. Each part sorts with its own copy of
// `less` (a comparator may tick a CancelTicker).
template <class T, class Less>
void sort_parallel(T* data, size_t n, const Less& less, int threads) {
  if (threads <= 1 || n < kParallelSortRows) {
    std::sort(data, data + n, less);
    return;
  }
  const size_t parts = static_cast<size_t>(threads);
  std::vector<size_t> bounds(parts + 1);
  for (size_t p = 0; p <= parts; ++p) bounds[p] = n * p / parts;
  cpu::parallel_for(threads, parts, [&](int, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) std::sort(data + bounds[p], data + bounds[p + 1], Less(less));
  });
  for (size_t width = 1; width < parts; width *= 2) {
    std::vector<size_t> starts;
    for (size_t p = 0; p + width < parts; p += 2 * width) starts.push_back(p);
    cpu::parallel_for(threads, starts.size(), [&](int, size_t begin, size_t end) {
      for (size_t m = begin; m < end; ++m) {
        const size_t p = starts[m];
        std::inplace_merge(data + bounds[p], data + bounds[p + width], data + bounds[std::min(p + 2 * width, parts)],
                           Less(less));
      }
    });
  }
}

// Order-preserving 64-bit images of a column's values (unsigned
// comparison), DESC inverted, then shifted so the smallest is 1 and a NULL
// takes 0 (NULLS FIRST) or one past the largest: one word per column. False
// when the values span too much of the 64-bit range to leave room for NULL.
bool column_words(const WindowSortColumn& col, size_t n, std::vector<uint64_t>& words) {
  const Vector& v = *col.values;
  words.resize(n);
  const uint64_t flip = col.descending ? UINT64_MAX : 0;
  if (physical_of(v.type.id) == Physical::floating) {
    const double* f = v.floats.data();
    for (size_t i = 0; i < n; ++i) {
      double d = f[i];
      if (d == 0) d = 0;  // -0 sorts with 0
      const auto bits = std::bit_cast<uint64_t>(d);
      const uint64_t w = std::isnan(d) ? UINT64_MAX : ((bits >> 63) ? ~bits : bits | (uint64_t{1} << 63));
      words[i] = w ^ flip;
    }
  } else {
    const int64_t* ints = v.int_data();
    for (size_t i = 0; i < n; ++i) words[i] = (static_cast<uint64_t>(ints[i]) ^ (uint64_t{1} << 63)) ^ flip;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    if (v.null_at(i)) continue;
    lo = std::min(lo, words[i]);
    hi = std::max(hi, words[i]);
  }
  if (lo > hi) lo = hi = 0;  // every value NULL
  if (hi - lo >= UINT64_MAX - 2) return false;
  const uint64_t null_word = col.nulls_first ? 0 : hi - lo + 2;
  for (size_t i = 0; i < n; ++i) words[i] = v.null_at(i) ? null_word : words[i] - lo + 1;
  return true;
}

template <size_t W>
struct KeyRow {
  uint64_t key[W];
  uint32_t row;
};

template <size_t W>
bool key_less(const KeyRow<W>& a, const KeyRow<W>& b) {
  for (size_t k = 0; k < W; ++k) {
    if (a.key[k] != b.key[k]) return a.key[k] < b.key[k];
  }
  return a.row < b.row;
}

// Sorts by the words. When the first word spans a range not much larger
// than the row count (a PARTITION BY over integer keys), a counting sort
// places the rows by it in one pass and only each bucket is sorted by the
// rest: many small sorts instead of one over every row.
template <size_t W>
void sort_keys(std::vector<KeyRow<W>>& keys, int threads) {
  const auto less = [ticker = CancelTicker{}](const KeyRow<W>& a, const KeyRow<W>& b) mutable {
    ticker.tick();
    return key_less(a, b);
  };
  const size_t n = keys.size();
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& k : keys) {
    lo = std::min(lo, k.key[0]);
    hi = std::max(hi, k.key[0]);
  }
  if (n < 4096 || hi - lo >= 2 * static_cast<uint64_t>(n)) {
    sort_parallel(keys.data(), n, less, threads);
    return;
  }
  std::vector<uint32_t> starts(hi - lo + 2, 0);
  for (const auto& k : keys) ++starts[k.key[0] - lo + 1];
  for (size_t b = 1; b < starts.size(); ++b) starts[b] += starts[b - 1];
  std::vector<KeyRow<W>> placed(n);
  std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
  for (const auto& k : keys) placed[next[k.key[0] - lo]++] = k;  // stable: rows stay in input order
  if (W > 1) {
    // The buckets are independent: split over the workers.
    cpu::parallel_for(threads, starts.size() - 1, [&](int, size_t begin, size_t end) {
      auto bucket_less = less;
      for (size_t b = begin; b < end; ++b) {
        if (starts[b + 1] - starts[b] > 1) std::sort(placed.begin() + starts[b], placed.begin() + starts[b + 1], bucket_less);
      }
    });
  }
  keys.swap(placed);
}

template <size_t W>
void sort_by_words(size_t n, const std::vector<std::vector<uint64_t>>& words, size_t partition_columns,
                   WindowOrdering& out, int threads) {
  std::vector<KeyRow<W>> keys(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < W; ++k) keys[i].key[k] = words[k][i];
    keys[i].row = static_cast<uint32_t>(i);
  }
  sort_keys(keys, threads);
  out.rows.resize(n);
  out.group_of.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.rows[i] = keys[i].row;
    bool new_partition = i == 0, new_group = i == 0;
    for (size_t k = 0; k < W && i > 0; ++k) {
      if (keys[i].key[k] != keys[i - 1].key[k]) {
        new_group = true;
        new_partition = k < partition_columns;
        break;
      }
    }
    if (new_partition) out.partitions.push_back(static_cast<uint32_t>(i));
    if (new_group) out.groups.push_back(static_cast<uint32_t>(i));
    out.group_of[i] = static_cast<uint32_t>(out.groups.size() - 1);
  }
}

// The word sort, when every key is an integer, boolean or float (at most 4).
bool sort_by_words(size_t n, const std::vector<WindowSortColumn>& all, size_t partition_columns, WindowOrdering& out,
                   int threads) {
  if (all.size() > 4) return false;
  std::vector<std::vector<uint64_t>> words(all.size());
  for (size_t c = 0; c < all.size(); ++c) {
    if (!word_sortable(*all[c].values) || !column_words(all[c], n, words[c])) return false;
  }
  switch (all.size()) {
    case 1: sort_by_words<1>(n, words, partition_columns, out, threads); break;
    case 2: sort_by_words<2>(n, words, partition_columns, out, threads); break;
    case 3: sort_by_words<3>(n, words, partition_columns, out, threads); break;
    default: sort_by_words<4>(n, words, partition_columns, out, threads); break;
  }
  return true;
}

// A text column as the rank of each value among the column's distinct
// values (bytewise order, as compare_values orders text; NULLs kept): text
// keys then sort as integers, by the word path, instead of by comparing
// strings n log n times.
Vector text_ranks(const Vector& v, size_t n) {
  std::unordered_map<std::string_view, uint32_t> ids;
  std::vector<std::string_view> distinct;
  std::vector<uint32_t> id(n, 0);
  CancelTicker ticker;
  for (size_t i = 0; i < n; ++i) {
    ticker.tick();
    if (v.null_at(i)) continue;
    auto [it, added] = ids.try_emplace(v.text_at(i), static_cast<uint32_t>(distinct.size()));
    if (added) distinct.push_back(v.text_at(i));
    id[i] = it->second;
  }
  std::vector<uint32_t> by_text(distinct.size());
  std::iota(by_text.begin(), by_text.end(), 0u);
  std::sort(by_text.begin(), by_text.end(), [&](uint32_t a, uint32_t b) { return distinct[a] < distinct[b]; });
  std::vector<int64_t> rank(distinct.size());
  for (size_t r = 0; r < by_text.size(); ++r) rank[by_text[r]] = static_cast<int64_t>(r);
  Vector out(SqlType{TypeId::int8});
  out.resize(n);
  out.nulls = v.nulls;
  for (size_t i = 0; i < n; ++i) out.ints[i] = v.null_at(i) ? 0 : rank[id[i]];
  return out;
}

}  // namespace

WindowOrdering sort_window_rows(size_t n, const std::vector<WindowSortColumn>& partition,
                                const std::vector<WindowSortColumn>& order, int threads) {
  WindowOrdering out;
  std::vector<WindowSortColumn> all = partition;
  all.insert(all.end(), order.begin(), order.end());
  // The ordering's arrays and a sort word per key column, against the
  // statement's memory budget while the rows are sorted.
  MemoryReservation memory;
  memory.resize(n * (2 * sizeof(uint32_t) + (all.size() + 1) * sizeof(uint64_t)));
  std::vector<Vector> ranks;
  ranks.reserve(all.size());
  for (auto& c : all) {
    if (physical_of(c.values->type.id) != Physical::text || c.values->type.id == TypeId::bpchar) continue;
    ranks.push_back(text_ranks(*c.values, n));
    c.values = &ranks.back();
  }
  if (all.empty()) {
    out.rows.resize(n);
    std::iota(out.rows.begin(), out.rows.end(), 0u);
    out.group_of.assign(n, 0);
    if (n > 0) out.partitions.push_back(0), out.groups.push_back(0);
  } else if (!sort_by_words(n, all, partition.size(), out, threads)) {
    out.rows.resize(n);
    std::iota(out.rows.begin(), out.rows.end(), 0u);
    const auto less = [&all, ticker = CancelTicker{}](uint32_t a, uint32_t b) mutable {
      ticker.tick();
      const int r = compare_rows(all, a, b);
      return r != 0 ? r < 0 : a < b;
    };
    sort_parallel(out.rows.data(), n, less, threads);
    out.group_of.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const bool new_partition = i == 0 || compare_rows(partition, out.rows[i - 1], out.rows[i]) != 0;
      const bool new_group = new_partition || compare_rows(order, out.rows[i - 1], out.rows[i]) != 0;
      if (new_partition) out.partitions.push_back(static_cast<uint32_t>(i));
      if (new_group) out.groups.push_back(static_cast<uint32_t>(i));
      out.group_of[i] = static_cast<uint32_t>(out.groups.size() - 1);
    }
  }
  out.partitions.push_back(static_cast<uint32_t>(n));
  out.groups.push_back(static_cast<uint32_t>(n));
  return out;
}

}  // namespace tally::executor
