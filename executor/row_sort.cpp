#include "executor/row_sort.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "common/memory_tracker.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/cpu/parallel_sort.hpp"
#include "storage/string_dictionary.hpp"

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

int compare_sort_values(const Vector& va, size_t a, const Vector& vb, size_t b, bool descending, bool nulls_first) {
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
    case Physical::numeric:
      // Held values compare as they are; an unmaterialized avg computes each.
      if (!va.avg_parts && !vb.avg_parts) {
        const auto c = va.numerics[a] <=> vb.numerics[b];
        r = c < 0 ? -1 : (c > 0 ? 1 : 0);
        break;
      }
      r = compare_values(va.get(a), vb.get(b));
      break;
    default: r = compare_values(va.get(a), vb.get(b));
  }
  return descending ? -r : r;
}

namespace {

int compare_column(const SortColumn& c, uint32_t a, uint32_t b) {
  return compare_sort_values(*c.values, a, *c.values, b, c.descending, c.nulls_first);
}

int compare_rows(const std::vector<SortColumn>& columns, uint32_t a, uint32_t b) {
  for (const auto& c : columns) {
    if (int r = compare_column(c, a, b)) return r;
  }
  return 0;
}

// Words a sort key may be packed into: beyond them, rows compare values.
constexpr size_t kMaxWords = 4;

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
  const auto less = [](const KeyRow<W>& a, const KeyRow<W>& b) {
    tick_on_this_thread();
    return key_less(a, b);
  };
  const size_t n = keys.size();
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& k : keys) {
    lo = std::min(lo, k.key[0]);
    hi = std::max(hi, k.key[0]);
  }
  if (n < 4096 || hi - lo >= 2 * static_cast<uint64_t>(n)) {
    cpu::sort_parallel(keys.data(), n, less, threads);
    return;
  }
  std::vector<uint32_t> starts(hi - lo + 2, 0);
  CancelTicker ticker;
  for (const auto& k : keys) {
    ticker.tick();
    ++starts[k.key[0] - lo + 1];
  }
  for (size_t b = 1; b < starts.size(); ++b) starts[b] += starts[b - 1];
  std::vector<KeyRow<W>> placed(n);
  std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
  for (const auto& k : keys) {
    ticker.tick();
    placed[next[k.key[0] - lo]++] = k;  // stable: rows stay in input order
  }
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

// Where one key column goes in the packed words. Its image of a row is
// NULL ? null_image : raw - lo + offset, with raw the value's unsigned
// order-preserving form (DESC inverted), offset 1 when a NULL takes 0
// (NULLS FIRST), and null_image one past the largest value otherwise; it
// takes `bits` bits of word `word`, `shift` bits up (earlier columns higher).
struct PackedColumn {
  const Vector* values = nullptr;
  uint64_t flip = 0;  // all ones for DESC
  bool floating = false;
  uint64_t lo = 0;
  uint64_t offset = 0;
  uint64_t null_image = 0;
  unsigned bits = 0;
  unsigned word = 0;
  unsigned shift = 0;
};

// The type is decided once per column, not per row: these run over every row.
uint64_t raw_image(const Vector& v, size_t i, uint64_t flip, bool floating) {
  if (floating) {
    double d = v.floats[i];
    if (d == 0) d = 0;  // -0 sorts with 0
    const auto bits = std::bit_cast<uint64_t>(d);
    return (std::isnan(d) ? UINT64_MAX : ((bits >> 63) ? ~bits : bits | (uint64_t{1} << 63))) ^ flip;
  }
  return (static_cast<uint64_t>(v.int_data()[i]) ^ (uint64_t{1} << 63)) ^ flip;
}

uint64_t packed_image(const PackedColumn& c, size_t i) {
  if (c.values->null_at(i)) return c.null_image;
  return raw_image(*c.values, i, c.flip, c.floating) - c.lo + c.offset;
}

// The packing of every key column, each column's range read on `threads`
// workers; the order columns start a word of their own so that the
// partition words alone tell partitions apart. False when a column is not
// an integer, boolean or float, spans the whole 64-bit range beside a
// NULL, or the columns need more than kMaxWords words.
bool plan_packing(size_t n, const std::vector<SortColumn>& all, size_t partition_columns, int threads,
                  std::vector<PackedColumn>& packed, size_t& words, size_t& partition_words) {
  packed.clear();
  unsigned word = 0, used = 0;
  for (size_t c = 0; c < all.size(); ++c) {
    const Vector& v = *all[c].values;
    const Physical p = physical_of(v.type.id);
    if (p != Physical::integer && p != Physical::boolean && p != Physical::floating) return false;
    PackedColumn col;
    col.values = &v;
    col.flip = all[c].descending ? UINT64_MAX : 0;
    col.floating = p == Physical::floating;
    struct Range {
      uint64_t lo = UINT64_MAX, hi = 0;
      bool nulls = false;
    };
    const size_t parts = static_cast<size_t>(std::max(threads, 1));
    std::vector<Range> ranges(parts);
    cpu::parallel_for(threads, n, [&](int part, size_t begin, size_t end) {
      Range r;
      CancelTicker ticker;
      for (size_t i = begin; i < end; ++i) {
        ticker.tick();
        if (v.null_at(i)) {
          r.nulls = true;
          continue;
        }
        const uint64_t x = raw_image(v, i, col.flip, col.floating);
        r.lo = std::min(r.lo, x);
        r.hi = std::max(r.hi, x);
      }
      ranges[static_cast<size_t>(part)] = r;
    });
    Range all_rows;
    for (const Range& r : ranges) {
      all_rows.lo = std::min(all_rows.lo, r.lo);
      all_rows.hi = std::max(all_rows.hi, r.hi);
      all_rows.nulls = all_rows.nulls || r.nulls;
    }
    if (all_rows.lo > all_rows.hi) all_rows.lo = all_rows.hi = 0;  // every value NULL
    const uint64_t span = all_rows.hi - all_rows.lo;
    if (all_rows.nulls && span == UINT64_MAX) return false;
    col.lo = all_rows.lo;
    col.offset = all_rows.nulls && all[c].nulls_first ? 1 : 0;
    col.null_image = all[c].nulls_first ? 0 : span + 1;
    const uint64_t largest = span + (all_rows.nulls ? 1 : 0);
    col.bits = static_cast<unsigned>(std::bit_width(largest));
    const bool first_order_column = c == partition_columns && c > 0;
    if (first_order_column && used > 0) {
      ++word;
      used = 0;
    }
    if (first_order_column) partition_words = word;
    if (used + col.bits > 64) {
      ++word;
      used = 0;
    }
    col.word = word;
    col.shift = 64 - used - col.bits;
    used += col.bits;
    packed.push_back(col);
  }
  words = static_cast<size_t>(word) + 1;
  if (partition_columns == all.size()) partition_words = words;
  if (partition_columns == 0) partition_words = 0;
  return words <= kMaxWords;
}

template <size_t W>
void sort_packed(size_t n, const std::vector<PackedColumn>& packed, size_t partition_words, RowOrdering& out,
                 int threads, bool boundaries) {
  std::vector<KeyRow<W>> keys(n);
  cpu::parallel_for(threads, n, [&](int, size_t begin, size_t end) {
    CancelTicker ticker;
    for (size_t i = begin; i < end; ++i) {
      ticker.tick();
      KeyRow<W>& k = keys[i];
      for (size_t w = 0; w < W; ++w) k.key[w] = 0;
      for (const PackedColumn& c : packed) {
        if (c.bits > 0) k.key[c.word] |= packed_image(c, i) << c.shift;
      }
      k.row = static_cast<uint32_t>(i);
    }
  });
  sort_keys(keys, threads);
  out.rows.resize(n);
  cpu::parallel_for(threads, n, [&](int, size_t begin, size_t end) {
    CancelTicker ticker;
    for (size_t i = begin; i < end; ++i) {
      ticker.tick();
      out.rows[i] = keys[i].row;
    }
  });
  if (!boundaries) return;
  out.group_of.resize(n);
  CancelTicker ticker;
  for (size_t i = 0; i < n; ++i) {
    ticker.tick();
    bool new_partition = i == 0, new_group = i == 0;
    for (size_t k = 0; k < W && i > 0; ++k) {
      if (keys[i].key[k] != keys[i - 1].key[k]) {
        new_group = true;
        new_partition = k < partition_words;
        break;
      }
    }
    if (new_partition) out.partitions.push_back(static_cast<uint32_t>(i));
    if (new_group) out.groups.push_back(static_cast<uint32_t>(i));
    out.group_of[i] = static_cast<uint32_t>(out.groups.size() - 1);
  }
}

// The packed sort, when every key is an integer, boolean or float and they
// fit kMaxWords words.
bool sort_by_words(size_t n, const std::vector<SortColumn>& all, size_t partition_columns, RowOrdering& out,
                   int threads, bool boundaries) {
  std::vector<PackedColumn> packed;
  size_t words = 0, partition_words = 0;
  if (!plan_packing(n, all, partition_columns, threads, packed, words, partition_words)) return false;
  MemoryReservation memory;
  memory.resize(n * 2 * (words + 1) * sizeof(uint64_t));  // the keys and the merge's buffer
  switch (words) {
    case 1: sort_packed<1>(n, packed, partition_words, out, threads, boundaries); break;
    case 2: sort_packed<2>(n, packed, partition_words, out, threads, boundaries); break;
    case 3: sort_packed<3>(n, packed, partition_words, out, threads, boundaries); break;
    default: sort_packed<4>(n, packed, partition_words, out, threads, boundaries); break;
  }
  return true;
}

// A text column as the rank of each value among the column's distinct
// values (bytewise order, as compare_values orders text; NULLs kept): text
// keys then sort as integers, by the packed words, instead of by comparing
// strings n log n times. A dictionary-coded column ranks the codes its rows
// use, once each, rather than hashing every row's string.
Vector text_ranks(const Vector& v, size_t n, int threads) {
  Vector out(SqlType{TypeId::int8});
  out.resize(n);
  out.nulls = v.nulls;
  CancelTicker ticker;
  if (v.coded() && static_cast<size_t>(v.dictionary->size()) <= 4 * n + 1024) {
    const storage::StringDictionary& dictionary = *v.dictionary;
    std::vector<uint8_t> used(static_cast<size_t>(dictionary.size()), 0);
    for (size_t i = 0; i < n; ++i) {
      ticker.tick();
      if (!v.null_at(i)) used[static_cast<size_t>(v.codes[i])] = 1;
    }
    std::vector<int32_t> codes;
    for (size_t c = 0; c < used.size(); ++c) {
      if (used[c]) codes.push_back(static_cast<int32_t>(c));
    }
    // A dictionary's entries are distinct: a strict total order.
    const auto less = [&dictionary](int32_t a, int32_t b) {
      tick_on_this_thread();
      return dictionary.at(a) < dictionary.at(b);
    };
    cpu::sort_parallel(codes.data(), codes.size(), less, threads);
    std::vector<int64_t> rank(used.size(), 0);
    for (size_t r = 0; r < codes.size(); ++r) rank[static_cast<size_t>(codes[r])] = static_cast<int64_t>(r);
    cpu::parallel_for(threads, n, [&](int, size_t begin, size_t end) {
      CancelTicker part_ticker;
      for (size_t i = begin; i < end; ++i) {
        part_ticker.tick();
        out.ints[i] = v.null_at(i) ? 0 : rank[static_cast<size_t>(v.codes[i])];
      }
    });
    return out;
  }
  std::unordered_map<std::string_view, uint32_t> ids;
  std::vector<std::string_view> distinct;
  std::vector<uint32_t> id(n, 0);
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
  for (size_t i = 0; i < n; ++i) out.ints[i] = v.null_at(i) ? 0 : rank[id[i]];
  return out;
}

}  // namespace

RowOrdering sort_rows(size_t n, const std::vector<SortColumn>& partition, const std::vector<SortColumn>& order,
                      int threads, bool boundaries) {
  RowOrdering out;
  std::vector<SortColumn> all = partition;
  all.insert(all.end(), order.begin(), order.end());
  // The ordering's arrays and a rank per text key, against the statement's
  // memory budget while the rows are sorted (the packed words reserve theirs).
  MemoryReservation memory;
  memory.resize(n * (2 * sizeof(uint32_t) + all.size() * sizeof(int64_t)));
  std::vector<Vector> ranks;
  ranks.reserve(all.size());
  for (auto& c : all) {
    // char(n) too: its values compare by their bytes here as in compare_sort_values.
    if (physical_of(c.values->type.id) != Physical::text) continue;
    ranks.push_back(text_ranks(*c.values, n, threads));
    c.values = &ranks.back();
  }
  if (all.empty()) {
    out.rows.resize(n);
    std::iota(out.rows.begin(), out.rows.end(), 0u);
    if (boundaries) {
      out.group_of.assign(n, 0);
      if (n > 0) out.partitions.push_back(0), out.groups.push_back(0);
    }
  } else if (!sort_by_words(n, all, partition.size(), out, threads, boundaries)) {
    out.rows.resize(n);
    std::iota(out.rows.begin(), out.rows.end(), 0u);
    const auto less = [&all](uint32_t a, uint32_t b) {
      tick_on_this_thread();
      const int r = compare_rows(all, a, b);
      return r != 0 ? r < 0 : a < b;
    };
    cpu::sort_parallel(out.rows.data(), n, less, threads);
    if (boundaries) {
      out.group_of.resize(n);
      for (size_t i = 0; i < n; ++i) {
        const bool new_partition = i == 0 || compare_rows(partition, out.rows[i - 1], out.rows[i]) != 0;
        const bool new_group = new_partition || compare_rows(order, out.rows[i - 1], out.rows[i]) != 0;
        if (new_partition) out.partitions.push_back(static_cast<uint32_t>(i));
        if (new_group) out.groups.push_back(static_cast<uint32_t>(i));
        out.group_of[i] = static_cast<uint32_t>(out.groups.size() - 1);
      }
    }
  }
  if (boundaries) {
    out.partitions.push_back(static_cast<uint32_t>(n));
    out.groups.push_back(static_cast<uint32_t>(n));
  }
  return out;
}

}  // namespace tally::executor
