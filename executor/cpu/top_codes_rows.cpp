#include "executor/cpu/top_codes_rows.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>

#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "common/ordered_code.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/key_table.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

namespace {

// Chunks below this many rows are split on one thread.
constexpr size_t kParallelRows = size_t{1} << 15;
// Partitions per worker: enough that a skewed partition does not leave the
// other workers idle.
constexpr int kPartitionsPerThread = 4;
// A key range is held directly (an entry per key of the range, no probe)
// when it is no wider than this many entries per expected key.
constexpr uint64_t kDirectEntriesPerKey = 2;
constexpr uint64_t kMinDirectEntries = 4096;
// The most entries a direct range takes: a million keys' top-2 is 32 MB.
constexpr uint64_t kMaxDirectEntries = uint64_t{1} << 24;

// Entries of 3 + k words: the key, its values' count, its rows' count (the
// values', and the rows of a NULL value where those are counted; 0: a free
// entry), then the k best codes seen, best first. Codes are kept so that
// smaller is better: a shape's largest codes complemented.
class Entries {
 public:
  static constexpr size_t kValues = 1, kRows = 2, kCodes = 3;

  explicit Entries(int k) : k_(k), width_(kCodes + static_cast<size_t>(k)) {}

  size_t width() const { return width_; }

  // Adds a row of code x to entry e.
  void add(uint64_t* e, uint64_t x) const {
    ++e[kRows];
    const uint64_t c = e[kValues]++;
    uint64_t* r = e + kCodes;
    size_t j = static_cast<size_t>(k_);
    if (c < static_cast<uint64_t>(k_)) {
      j = static_cast<size_t>(c);
    } else {
      if (x >= r[k_ - 1]) return;
      j = static_cast<size_t>(k_) - 1;
    }
    while (j > 0 && r[j - 1] > x) {
      r[j] = r[j - 1];
      --j;
    }
    r[j] = x;
  }

  // Adds a row whose value is NULL to entry e.
  static void add_row(uint64_t* e) { ++e[kRows]; }

 private:
  int k_;
  size_t width_;
};

// One partition's keys: those of its part of the direct range in an array,
// any other in an open-addressing table (linear probing, at most half full).
class Partition {
 public:
  Partition(Entries entries, int64_t direct_low, uint64_t direct_span)
      : entries_(entries), low_(direct_low), span_(direct_span), direct_(direct_span * entries.width(), 0) {}

  void offer(int64_t key, uint64_t x) { entries_.add(entry(key), x); }
  void offer_row(int64_t key) { Entries::add_row(entry(key)); }

  uint64_t bytes() const { return (direct_.capacity() + hashed_.capacity()) * sizeof(uint64_t); }

  // Calls f(key, entry) for every key with rows.
  template <class F>
  void each(F&& f) const {
    const size_t w = entries_.width();
    for (uint64_t i = 0; i < span_; ++i) {
      const uint64_t* e = direct_.data() + i * w;
      if (e[Entries::kRows] != 0) f(static_cast<int64_t>(static_cast<uint64_t>(low_) + i), e);
    }
    for (size_t s = 0; s < capacity_; ++s) {
      const uint64_t* e = hashed_.data() + s * w;
      if (e[Entries::kRows] != 0) f(static_cast<int64_t>(e[0]), e);
    }
  }

 private:
  // Key's entry, made where it has none (rows 0 until a row is added).
  uint64_t* entry(int64_t key) {
    const uint64_t offset = static_cast<uint64_t>(key) - static_cast<uint64_t>(low_);
    if (offset < span_) return direct_.data() + offset * entries_.width();
    if (2 * (used_ + 1) > capacity_) grow();
    const size_t w = entries_.width();
    for (size_t s = hash_key(key) & (capacity_ - 1);; s = (s + 1) & (capacity_ - 1)) {
      uint64_t* e = hashed_.data() + s * w;
      if (e[Entries::kRows] == 0) {
        e[0] = static_cast<uint64_t>(key);
        ++used_;
        return e;
      }
      if (e[0] == static_cast<uint64_t>(key)) return e;
    }
  }

  void grow() {
    const size_t w = entries_.width();
    std::vector<uint64_t> old = std::move(hashed_);
    const size_t old_capacity = capacity_;
    capacity_ = std::max<size_t>(1024, 2 * capacity_);
    hashed_.assign(capacity_ * w, 0);
    for (size_t s = 0; s < old_capacity; ++s) {
      const uint64_t* e = old.data() + s * w;
      if (e[Entries::kRows] == 0) continue;
      size_t t = hash_key(static_cast<int64_t>(e[0])) & (capacity_ - 1);
      while (hashed_[t * w + Entries::kRows] != 0) t = (t + 1) & (capacity_ - 1);
      std::copy(e, e + w, hashed_.data() + t * w);
    }
  }

  Entries entries_;
  int64_t low_;
  uint64_t span_;
  std::vector<uint64_t> direct_;
  std::vector<uint64_t> hashed_;
  size_t capacity_ = 0, used_ = 0;
};

// A row on its way to its partition: its key and code.
struct Offered {
  int64_t key;
  uint64_t code;
};

// One thread's rows for one partition. The append is the split's whole
// work per row, so its common case is kept inline (a vector's push_back
// was not) and its growth out of line.
class OfferedRows {
 public:
  void clear() { size_ = 0; }
  void push(int64_t key, uint64_t code) {
    if (size_ == rows_.size()) grow();
    rows_[size_++] = Offered{key, code};
  }
  const Offered* begin() const { return rows_.data(); }
  const Offered* end() const { return rows_.data() + size_; }
  uint64_t bytes() const { return rows_.capacity() * sizeof(Offered); }

 private:
  [[gnu::noinline]] void grow() { rows_.resize(std::max<size_t>(1024, 2 * rows_.size())); }
  std::vector<Offered> rows_;
  size_t size_ = 0;
};

class TopCodesRows final : public OrderedRowsCollector {
 public:
  TopCodesRows(const AggregationSpec& spec, const std::vector<TopCodesShape>& shapes, int threads)
      : spec_(spec), threads_(std::max(threads, 1)),
        partitions_(kPartitionsPerThread * threads_) {
    // The direct range: the keys' range from statistics (a packed key's
    // is [0, key_max]) where it is narrow enough, split evenly among the
    // partitions; a key outside it goes to its partition's table.
    int64_t low = 0;
    uint64_t range = 0;
    if (!spec.key_parts.empty()) {
      range = static_cast<uint64_t>(spec.key_max) + 1;
    } else if (spec.key_range_known && spec.key_max >= spec.key_min) {
      low = spec.key_min;
      range = static_cast<uint64_t>(spec.key_max) - static_cast<uint64_t>(spec.key_min) + 1;
    }
    const uint64_t expected = std::max(spec.estimated_groups, kMinDirectEntries);
    if (range == 0 || range > kDirectEntriesPerKey * expected || range > kMaxDirectEntries) range = 0;
    direct_low_ = low;
    // A power of two, so that a row's partition is a shift.
    while (range > 0 && (uint64_t{1} << direct_shift_) * static_cast<uint64_t>(partitions_) < range) ++direct_shift_;
    direct_span_ = range == 0 ? 0 : uint64_t{1} << direct_shift_;
    direct_keys_ = direct_span_ * static_cast<uint64_t>(partitions_);
    for (const TopCodesShape& shape : shapes) {
      Slot s{Entries(shape.k), {}, {}, shape};
      for (int p = 0; p < partitions_; ++p) {
        const uint64_t first = static_cast<uint64_t>(p) * direct_span_;
        const uint64_t span = first >= range ? 0 : std::min(direct_span_, range - first);
        s.partitions.emplace_back(s.entries, static_cast<int64_t>(static_cast<uint64_t>(low) + first), span);
      }
      s.null_entry.assign(s.entries.width(), 0);
      slots_.push_back(std::move(s));
    }
    offered_.resize(static_cast<size_t>(threads_) * static_cast<size_t>(partitions_));
    null_values_.resize(offered_.size());
    reserve();
  }

  bool hold(const ColumnIdentity&, ColumnWidth) override { return false; }

  bool count_every_row() override {
    every_row_ = true;
    return true;
  }

  void collect(const ChunkInput& chunk, const std::vector<OrderedRowsSlot>& slots) override {
    const size_t n = chunk.rows;
    if (n == 0) return;
    const int64_t* packed = nullptr;
    if (!spec_.key_parts.empty()) {
      packed_.resize(n);
      parallel_for(n >= kParallelRows ? threads_ : 1, n,
                   [&](int, size_t b, size_t e) { pack_key_rows(spec_.key_parts, chunk, b, e, packed_.data() + b); });
      packed = packed_.data();
    }
    for (size_t s = 0; s < slots.size() && s < slots_.size(); ++s) collect_slot(chunk, packed, slots[s], slots_[s]);
    reserve();
  }

  KeyedSegments sorted(size_t) override {
    throw Error(SqlState::internal_error, "top-codes rows: a slot asked for every value");
  }

  KeyedPicks picked(size_t s, const std::vector<OrderedPick>& picks) override {
    KeyedPicks out;
    out.per_key = ordered_picks_per_group(picks);
    if (s >= slots_.size()) return out;
    Slot& slot = slots_[s];
    const std::optional<TopCodesShape> shape = top_codes_shape(picks);
    if (!shape || shape->largest != slot.shape.largest || shape->k > slot.shape.k) {
      throw Error(SqlState::internal_error, "top-codes rows: picks other than the planned ones");
    }
    const auto per = static_cast<size_t>(out.per_key);
    // Each partition's keys at their place: counted, then written on every thread.
    std::vector<size_t> first(slot.partitions.size() + 1, 0);
    parallel_tasks(threads_, slot.partitions.size(), [&](int, size_t p) {
      size_t keys = 0;
      slot.partitions[p].each([&](int64_t, const uint64_t*) { ++keys; });
      first[p + 1] = keys;
    });
    for (size_t p = 0; p < slot.partitions.size(); ++p) first[p + 1] += first[p];
    const size_t keys = first.back();
    const bool null_block = slot.null_entry[Entries::kRows] > 0;
    const size_t blocks = keys + (null_block ? 1 : 0);
    out.keys.resize(keys);
    out.counts.resize(keys);
    if (every_row_) out.every_row.resize(keys);
    out.codes.assign(blocks * per, 0);
    out.positions.resize(blocks * per);
    auto place = [&](size_t at, const uint64_t* e) {
      const uint64_t n = e[Entries::kValues];
      for (size_t j = 0; j < picks.size(); ++j) {
        uint64_t position[2] = {0, 0};
        uint64_t kept = 0;  // a key without values: its block is not read
        if (n > 0) {
          ordered_pick_positions(picks[j], n, position);
          kept = e[Entries::kCodes + std::min<uint64_t>(static_cast<uint64_t>(picks[j].fraction), n - 1)];
          kept = slot.shape.largest ? ~kept : kept;
        }
        out.codes[at * per + j] = kept;
        out.positions[at * per + j] = position[0];
      }
    };
    parallel_tasks(threads_, slot.partitions.size(), [&](int, size_t p) {
      size_t at = first[p];
      slot.partitions[p].each([&](int64_t key, const uint64_t* e) {
        out.keys[at] = key;
        out.counts[at] = e[Entries::kValues];
        if (every_row_) out.every_row[at] = e[Entries::kRows];
        place(at++, e);
      });
    });
    if (null_block) {
      out.null_key_rows = slot.null_entry[Entries::kValues];
      out.null_key_every_row = every_row_ ? slot.null_entry[Entries::kRows] : 0;
      place(keys, slot.null_entry.data());
    }
    slot.partitions.clear();
    reserve();
    return out;
  }

  std::string name() const override {
    return "host top-codes tables, " + std::to_string(threads_) + " threads";
  }

 private:
  struct Slot {
    Entries entries;
    std::vector<Partition> partitions;
    std::vector<uint64_t> null_entry;  // the NULL key's entry
    TopCodesShape shape;
  };

  size_t partition_of(int64_t key) const {
    const uint64_t offset = static_cast<uint64_t>(key) - static_cast<uint64_t>(direct_low_);
    if (offset < direct_keys_) return offset >> direct_shift_;
    return static_cast<size_t>(((hash_key(key) >> 32) * static_cast<uint64_t>(partitions_)) >> 32);
  }

  // The slot's kept rows of the chunk, split by partition on every thread,
  // then each partition's applied by one worker.
  void collect_slot(const ChunkInput& chunk, const int64_t* packed, const OrderedRowsSlot& which, Slot& slot) {
    const size_t n = chunk.rows;
    const ColumnView& in = chunk.values.at(static_cast<size_t>(which.input));
    const uint8_t* filter = which.filter;
    const uint8_t* key_valid = packed != nullptr ? nullptr : chunk.keys.validity;
    const int parts = n >= kParallelRows ? threads_ : 1;
    const auto partitions = static_cast<size_t>(partitions_);
    std::vector<std::vector<uint64_t>> null_codes(static_cast<size_t>(parts));
    std::vector<uint64_t> null_key_null_values(static_cast<size_t>(parts), 0);
    const bool largest = slot.shape.largest;
    const bool plain = in.validity == nullptr && filter == nullptr && key_valid == nullptr;
    // Rows [b, e) of thread t to their partitions, keys read by key_at.
    auto split_rows = [&](int t, size_t b, size_t e, auto code_of, auto key_at) {
      OfferedRows* mine = offered_.data() + static_cast<size_t>(t) * partitions;
      std::vector<int64_t>* mine_null = null_values_.data() + static_cast<size_t>(t) * partitions;
      for (size_t p = 0; p < partitions; ++p) mine[p].clear();
      for (size_t p = 0; p < partitions && every_row_; ++p) mine_null[p].clear();
      for (size_t begin = b; begin < e; begin += kCancelStride) {
        check_cancel_point();
        const size_t end = std::min(e, begin + kCancelStride);
        if (plain) {
          for (size_t r = begin; r < end; ++r) {
            const int64_t key = key_at(r);
            mine[partition_of(key)].push(key, largest ? ~code_of(r) : code_of(r));
          }
          continue;
        }
        for (size_t r = begin; r < end; ++r) {
          if (filter != nullptr && !filter[r]) continue;
          if (in.validity != nullptr && !in.validity[r]) {
            // A NULL value: its row counts where every row is counted.
            if (!every_row_) continue;
            if (key_valid != nullptr && !key_valid[r]) {
              ++null_key_null_values[static_cast<size_t>(t)];
            } else {
              const int64_t key = key_at(r);
              mine_null[partition_of(key)].push_back(key);
            }
            continue;
          }
          const uint64_t code = largest ? ~code_of(r) : code_of(r);
          if (key_valid != nullptr && !key_valid[r]) {
            null_codes[static_cast<size_t>(t)].push_back(code);
            continue;
          }
          const int64_t key = key_at(r);
          mine[partition_of(key)].push(key, code);
        }
      }
    };
    auto split = [&](auto code_of) {
      parallel_for(parts, n, [&](int t, size_t b, size_t e) {
        if (packed != nullptr) {
          split_rows(t, b, e, code_of, [&](size_t r) { return packed[r]; });
        } else if (chunk.keys.data == nullptr) {
          split_rows(t, b, e, code_of, [](size_t) { return int64_t{0}; });
        } else if (chunk.keys.width == ColumnWidth::int32) {
          const auto* keys = static_cast<const int32_t*>(chunk.keys.data);
          split_rows(t, b, e, code_of, [&](size_t r) { return int64_t{keys[r]}; });
        } else {
          const auto* keys = static_cast<const int64_t*>(chunk.keys.data);
          split_rows(t, b, e, code_of, [&](size_t r) { return keys[r]; });
        }
      });
    };
    with_order_codes(in, split);
    parallel_tasks(parts == 1 ? 1 : threads_, partitions, [&](int, size_t p) {
      Partition& partition = slot.partitions[p];
      CancelTicker ticker;
      for (int t = 0; t < parts; ++t) {
        for (const Offered& o : offered_[static_cast<size_t>(t) * partitions + p]) {
          ticker.tick();
          partition.offer(o.key, o.code);
        }
        if (!every_row_) continue;
        for (const int64_t key : null_values_[static_cast<size_t>(t) * partitions + p]) partition.offer_row(key);
      }
    });
    for (const std::vector<uint64_t>& codes : null_codes) {
      for (const uint64_t code : codes) slot.entries.add(slot.null_entry.data(), code);
    }
    for (const uint64_t rows : null_key_null_values) slot.null_entry[Entries::kRows] += rows;
  }

  // The tables' memory against the statement's budget (53200 past it).
  void reserve() {
    uint64_t bytes = 0;
    for (const Slot& s : slots_) {
      for (const Partition& p : s.partitions) bytes += p.bytes();
    }
    for (const OfferedRows& o : offered_) bytes += o.bytes();
    memory_.resize(bytes);
  }

  AggregationSpec spec_;
  int threads_;
  int partitions_;
  int64_t direct_low_ = 0;
  uint64_t direct_span_ = 0;  // direct keys per partition (0: none direct)
  uint32_t direct_shift_ = 0;  // log2 of direct_span_
  uint64_t direct_keys_ = 0;   // the direct range's keys held: direct_span_ * partitions
  std::vector<Slot> slots_;
  std::vector<OfferedRows> offered_;  // per (thread, partition)
  // Per (thread, partition): the keys of rows whose value is NULL, where
  // every row is counted (count_every_row).
  std::vector<std::vector<int64_t>> null_values_;
  bool every_row_ = false;
  std::vector<int64_t> packed_;
  MemoryReservation memory_;
};

}  // namespace

std::unique_ptr<OrderedRowsCollector> make_top_codes_rows(const AggregationSpec& spec,
                                                          const std::vector<std::optional<TopCodesShape>>& shapes,
                                                          int threads) {
  if (shapes.empty()) return nullptr;
  std::vector<TopCodesShape> known;
  for (const std::optional<TopCodesShape>& s : shapes) {
    if (!s) return nullptr;
    known.push_back(*s);
  }
  return std::make_unique<TopCodesRows>(spec, known, threads);
}

}  // namespace tally::executor::cpu
