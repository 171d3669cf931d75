#include "executor/operators/window_sort.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "executor/cancel_point.hpp"

namespace tally::executor {

namespace {

bool has_null(const Vector& v) {
  return std::any_of(v.nulls.begin(), v.nulls.end(), [](uint8_t n) { return n != 0; });
}

bool word_sortable(const Vector& v) {
  const Physical p = physical_of(v.type.id);
  return p == Physical::integer || p == Physical::boolean || p == Physical::floating;
}

// NaN sorts above every number and -0 equals 0, as in PostgreSQL's float comparison.
int compare_floats(double a, double b) {
  if (a < b) return -1;
  if (a > b) return 1;
  if (std::isnan(a)) return std::isnan(b) ? 0 : 1;
  return std::isnan(b) ? -1 : 0;
}

int compare_column(const WindowSortColumn& c, uint32_t a, uint32_t b) {
  const Vector& v = *c.values;
  const bool na = v.null_at(a), nb = v.null_at(b);
  if (na || nb) {
    if (na && nb) return 0;
    return na == c.nulls_first ? -1 : 1;
  }
  int r;
  switch (physical_of(v.type.id)) {
    case Physical::boolean:
    case Physical::integer: {
      const int64_t* ints = v.int_data();
      r = ints[a] < ints[b] ? -1 : (ints[a] > ints[b] ? 1 : 0);
      break;
    }
    case Physical::floating: r = compare_floats(v.floats[a], v.floats[b]); break;
    default: r = compare_values(v.get(a), v.get(b));
  }
  return c.descending ? -r : r;
}

int compare_rows(const std::vector<WindowSortColumn>& columns, uint32_t a, uint32_t b) {
  for (const auto& c : columns) {
    if (int r = compare_column(c, a, b)) return r;
  }
  return 0;
}

// An order-preserving 64-bit image of a value (unsigned comparison).
uint64_t word_of(const Vector& v, size_t row) {
  if (physical_of(v.type.id) == Physical::floating) {
    double d = v.floats[row];
    if (std::isnan(d)) return UINT64_MAX;
    if (d == 0) d = 0;  // -0 sorts with 0
    const auto bits = std::bit_cast<uint64_t>(d);
    return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
  }
  return static_cast<uint64_t>(v.int_data()[row]) ^ (uint64_t{1} << 63);
}

template <size_t W>
struct KeyRow {
  uint64_t key[W];
  uint32_t row;
};

// Sorts by normalized words: each column gives a NULL word (when it has
// NULLs) and a value word, inverted for DESC.
template <size_t W>
void sort_by_words(size_t n, const std::vector<WindowSortColumn>& columns, size_t partition_columns,
                   WindowOrdering& out, size_t& partition_words) {
  std::vector<KeyRow<W>> keys(n);
  size_t w = 0;
  partition_words = 0;
  CancelTicker ticker;
  for (size_t c = 0; c < columns.size(); ++c) {
    const auto& col = columns[c];
    const Vector& v = *col.values;
    if (has_null(v)) {
      for (size_t i = 0; i < n; ++i) keys[i].key[w] = v.null_at(i) == col.nulls_first ? 0 : 1;
      ++w;
    }
    const uint64_t flip = col.descending ? UINT64_MAX : 0;
    for (size_t i = 0; i < n; ++i) keys[i].key[w] = v.null_at(i) ? 0 : word_of(v, i) ^ flip;
    ++w;
    if (c + 1 == partition_columns) partition_words = w;
  }
  for (; w < W; ++w) {
    for (size_t i = 0; i < n; ++i) keys[i].key[w] = 0;
  }
  for (size_t i = 0; i < n; ++i) keys[i].row = static_cast<uint32_t>(i);
  std::sort(keys.begin(), keys.end(), [&](const KeyRow<W>& a, const KeyRow<W>& b) {
    ticker.tick();
    for (size_t k = 0; k < W; ++k) {
      if (a.key[k] != b.key[k]) return a.key[k] < b.key[k];
    }
    return a.row < b.row;
  });
  out.rows.resize(n);
  out.partitions.clear();
  out.groups.clear();
  out.group_of.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.rows[i] = keys[i].row;
    bool new_partition = i == 0, new_group = i == 0;
    for (size_t k = 0; k < W && i > 0; ++k) {
      if (keys[i].key[k] != keys[i - 1].key[k]) {
        new_group = true;
        if (k < partition_words) new_partition = true;
        break;
      }
    }
    if (new_partition) out.partitions.push_back(static_cast<uint32_t>(i));
    if (new_group) out.groups.push_back(static_cast<uint32_t>(i));
    out.group_of[i] = static_cast<uint32_t>(out.groups.size() - 1);
  }
}

}  // namespace

WindowOrdering sort_window_rows(size_t n, const std::vector<WindowSortColumn>& partition,
                                const std::vector<WindowSortColumn>& order) {
  WindowOrdering out;
  std::vector<WindowSortColumn> all = partition;
  all.insert(all.end(), order.begin(), order.end());
  size_t words = 0;
  bool by_words = true;
  for (const auto& c : all) {
    by_words = by_words && word_sortable(*c.values);
    words += has_null(*c.values) ? 2 : 1;
  }
  if (all.empty()) {
    out.rows.resize(n);
    std::iota(out.rows.begin(), out.rows.end(), 0u);
    out.group_of.assign(n, 0);
    if (n > 0) out.partitions.push_back(0), out.groups.push_back(0);
  } else if (by_words && words <= 4) {
    size_t partition_words = 0;
    switch (words) {
      case 1: sort_by_words<1>(n, all, partition.size(), out, partition_words); break;
      case 2: sort_by_words<2>(n, all, partition.size(), out, partition_words); break;
      case 3: sort_by_words<3>(n, all, partition.size(), out, partition_words); break;
      default: sort_by_words<4>(n, all, partition.size(), out, partition_words); break;
    }
  } else {
    out.rows.resize(n);
    std::iota(out.rows.begin(), out.rows.end(), 0u);
    CancelTicker ticker;
    std::sort(out.rows.begin(), out.rows.end(), [&](uint32_t a, uint32_t b) {
      ticker.tick();
      const int r = compare_rows(all, a, b);
      return r != 0 ? r < 0 : a < b;
    });
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
