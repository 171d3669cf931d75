#include "common/partial_states_merge.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <memory>
#include <utility>

#include "common/murmur_mix.hpp"

namespace tally {

bool mergeable(const AggregationSpec& spec) {
  if (spec.key_tuple) return false;
  for (const PartialAggregate& a : spec.aggregates) {
    if (a.op == PartialOp::ordered_values || a.op == PartialOp::count_distinct) return false;
  }
  return true;
}

namespace {

// Below this many groups in all parts a merge is one partition on the
// calling thread: the worker pool's fork and join (tens of microseconds)
// would cost more than the threads save.
constexpr size_t kPartitionedMergeMinGroups = size_t{1} << 15;
// Partitions of a larger merge: several per thread (the executor's pool has
// at most 16), taken by whichever thread is free, so that partitions of
// uneven size still balance; and, on one thread too, a partition of a
// 2^21-group merge keeps its table (~32K keys) in a core's L2 where one
// table of all keys would miss the cache at every key.
constexpr size_t kMergePartitions = 64;
// Groups per task of the passes that walk the parts' groups in order.
constexpr size_t kRangeGroups = size_t{1} << 16;
// How many groups ahead the combining pass asks for its targets' cache
// lines: enough misses in flight to cover a memory access's latency.
constexpr size_t kPrefetchAhead = 16;

// Dense keys (0, 1, 2, ...) spread evenly over partitions (the high bits)
// and table slots (the low bits).
uint64_t mix(int64_t key) { return murmur_fmix64(static_cast<uint64_t>(key)); }

// Where a group of a part other than the base goes (by its flat index):
// >= 0 a base group; kNew: a group of its own (its key's first appearance);
// else -(flat + 2) of that first appearance.
constexpr int64_t kNew = -1;

// One partition's keys (open addressing, linear probing, at most two
// thirds full: `keys` counts every group of the partition, of which those
// with a key seen before take no slot).
class KeyTable {
 public:
  struct Slot {
    int64_t key = 0;
    int64_t target = kAbsent;  // as a group's target above; kAbsent: free
    size_t part = 0;           // the last part whose group had the key
  };
  static constexpr int64_t kAbsent = INT64_MIN;
  explicit KeyTable(size_t keys) {
    const size_t slots = std::bit_ceil(std::max<size_t>(16, keys + keys / 2));
    mask_ = slots - 1;
    slots_.resize(slots);
  }
  // The slot of `key`; a free one (target kAbsent) with the key set when the key is new.
  Slot& find(int64_t key, uint64_t hash) {
    for (size_t s = hash & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.target == kAbsent) {
        slot.key = key;
        return slot;
      }
      if (slot.key == key) return slot;
    }
  }

 private:
  size_t mask_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace

AggregationResult merge_results(const AggregationSpec& spec, std::vector<AggregationResult> parts,
                                const ParallelTasks& parallel, size_t partitions) {
  if (parts.empty()) return {};
  // The largest part is the base: its groups are only looked up, never copied.
  auto largest = std::max_element(parts.begin(), parts.end(), [](const AggregationResult& a, const AggregationResult& b) {
    return a.groups() < b.groups();
  });
  std::iter_swap(parts.begin(), largest);
  AggregationResult out = std::move(parts.front());
  const size_t base = out.groups();
  if (out.key_valid.size() < base) out.key_valid.resize(base, 1);
  // The other parts' groups numbered one after the other ("flat" indexes):
  // part q's group g is offset[q - 1] + g.
  std::vector<size_t> offset{0};
  for (size_t q = 1; q < parts.size(); ++q) offset.push_back(offset.back() + parts[q].groups());
  const size_t others = offset.back();
  if (others == 0) return out;
  const auto part_of = [&](size_t flat) {
    return static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), flat) - offset.begin());
  };

  const int threads = spec.threads;
  const size_t p_count = partitions                                       ? std::bit_ceil(partitions)
                         : base + others >= kPartitionedMergeMinGroups ? kMergePartitions
                                                                       : 1;
  const int shift = 64 - std::countr_zero(p_count);
  const auto partition_of = [&](uint64_t hash) -> size_t {
    return p_count == 1 ? 0 : static_cast<size_t>(hash >> shift);
  };
  const auto valid_of = [&](size_t q, size_t g) {
    if (q == 0) return out.key_valid[g] != 0;
    const std::vector<uint8_t>& v = parts[q].key_valid;
    return g >= v.size() || v[g] != 0;
  };

  // 1. Every part's groups (the base as part 0) in ranges; each range
  // counts its keys per partition and notes its NULL-key groups.
  struct Range {
    size_t part, begin, end;
  };
  std::vector<Range> ranges;
  for (size_t q = 0; q < parts.size(); ++q) {
    const size_t n = q == 0 ? base : parts[q].groups();
    for (size_t b = 0; b < n; b += kRangeGroups) ranges.push_back({q, b, std::min(n, b + kRangeGroups)});
  }
  const auto keys_of = [&](size_t q) { return q == 0 ? out.keys.data() : parts[q].keys.data(); };
  std::vector<size_t> at(ranges.size() * p_count, 0);
  std::vector<std::vector<size_t>> nulls(ranges.size());
  run_tasks(parallel, threads, ranges.size(), [&](size_t r) {
    const Range& range = ranges[r];
    const int64_t* keys = keys_of(range.part);
    size_t* count = &at[r * p_count];
    for (size_t g = range.begin; g < range.end; ++g) {
      if (valid_of(range.part, g)) ++count[partition_of(mix(keys[g]))];
      else nulls[r].push_back(g);
    }
  });
  // 2. Each partition's keys in one array: the base's groups (their index)
  // first, then the others' (base + flat index) in flat order.
  std::vector<size_t> begin(p_count + 1, 0);
  size_t total = 0;
  for (size_t p = 0; p < p_count; ++p) {
    begin[p] = total;
    for (size_t r = 0; r < ranges.size(); ++r) {
      const size_t n = at[r * p_count + p];
      at[r * p_count + p] = total;
      total += n;
    }
  }
  begin[p_count] = total;
  struct Entry {
    int64_t key;
    size_t index;
  };
  // Left uninitialized (every element is written below), as are target
  // and place: zeroing them would cost as much as a pass of the merge.
  const std::unique_ptr<Entry[]> entries(new Entry[total]);
  run_tasks(parallel, threads, ranges.size(), [&](size_t r) {
    const Range& range = ranges[r];
    const int64_t* keys = keys_of(range.part);
    size_t* next = &at[r * p_count];
    const size_t first_index = range.part == 0 ? 0 : base + offset[range.part - 1];
    for (size_t g = range.begin; g < range.end; ++g) {
      if (valid_of(range.part, g)) entries[next[partition_of(mix(keys[g]))]++] = Entry{keys[g], first_index + g};
    }
  });

  // 3. Each other group's target, partition by partition. A part holding a
  // key twice (never a run's result, but possible in a part) would have two
  // of its groups combined into one target: such a part is combined on one
  // thread (step 6).
  const std::unique_ptr<int64_t[]> target(new int64_t[others]);
  std::vector<std::vector<uint8_t>> twice(p_count, std::vector<uint8_t>(parts.size(), 0));
  run_tasks(parallel, threads, p_count, [&](size_t p) {
    KeyTable table(begin[p + 1] - begin[p]);
    for (size_t i = begin[p]; i < begin[p + 1]; ++i) {
      const Entry& e = entries[i];
      KeyTable::Slot& slot = table.find(e.key, mix(e.key));
      if (e.index < base) {
        // A key the base holds twice keeps its first group, the other stays apart.
        if (slot.target == KeyTable::kAbsent) slot.target = static_cast<int64_t>(e.index);
        continue;
      }
      const size_t flat = e.index - base;
      const size_t q = part_of(flat);
      if (slot.target == KeyTable::kAbsent) {
        slot.target = -static_cast<int64_t>(flat) - 2;
        target[flat] = kNew;
      } else {
        target[flat] = slot.target;
        if (slot.part == q) twice[p][q] = 1;
      }
      slot.part = q;
    }
  });
  // The NULL key's group likewise (the base's last one, as a lookup would find).
  int64_t null_target = KeyTable::kAbsent;
  size_t null_part = 0;
  std::vector<uint8_t> serial(parts.size(), 0);
  for (size_t r = 0; r < ranges.size(); ++r) {
    const size_t q = ranges[r].part;
    for (const size_t g : nulls[r]) {
      if (q == 0) {
        null_target = static_cast<int64_t>(g);
        continue;
      }
      const size_t flat = offset[q - 1] + g;
      if (null_target == KeyTable::kAbsent) {
        null_target = -static_cast<int64_t>(flat) - 2;
        target[flat] = kNew;
      } else {
        target[flat] = null_target;
        if (null_part == q) serial[q] = 1;
      }
      null_part = q;
    }
  }
  for (const auto& t : twice)
    for (size_t q = 0; q < parts.size(); ++q) serial[q] |= t[q];

  // 4. The new groups' places, after the base's in flat order.
  const size_t flat_ranges = (others + kRangeGroups - 1) / kRangeGroups;
  std::vector<size_t> added_before(flat_ranges + 1, 0);
  run_tasks(parallel, threads, flat_ranges, [&](size_t r) {
    const size_t end = std::min(others, (r + 1) * kRangeGroups);
    size_t n = 0;
    for (size_t f = r * kRangeGroups; f < end; ++f) n += target[f] == kNew ? 1 : 0;
    added_before[r + 1] = n;
  });
  for (size_t r = 0; r < flat_ranges; ++r) added_before[r + 1] += added_before[r];
  const size_t groups = base + added_before[flat_ranges];
  const size_t aggregates = spec.aggregates.size();
  out.keys.resize(groups);
  out.key_valid.resize(groups);
  for (size_t a = 0; a < aggregates; ++a)
    visit_fields(spec.aggregates[a].op, [&](auto member) { (out.states[a].*member).resize(groups); });

  // 5. The new groups, copied to their places.
  const std::unique_ptr<size_t[]> place(new size_t[others]);
  run_tasks(parallel, threads, flat_ranges, [&](size_t r) {
    const size_t end = std::min(others, (r + 1) * kRangeGroups);
    size_t to = base + added_before[r];
    for (size_t f = r * kRangeGroups; f < end; ++f) {
      if (target[f] != kNew) continue;
      const size_t q = part_of(f);
      const size_t g = f - offset[q - 1];
      const AggregationResult& part = parts[q];
      place[f] = to;
      out.keys[to] = part.keys[g];
      out.key_valid[to] = valid_of(q, g) ? 1 : 0;
      for (size_t a = 0; a < aggregates; ++a) {
        visit_fields(spec.aggregates[a].op,
                     [&](auto member) { (out.states[a].*member)[to] = (part.states[a].*member)[g]; });
      }
      ++to;
    }
  });

  // 6. The rest combined into their groups, part after part (so each group
  // takes the parts' states in part order); within a part every group has
  // its own target, so its ranges run at once.
  for (size_t q = 1; q < parts.size(); ++q) {
    const AggregationResult& part = parts[q];
    const size_t n = part.groups();
    const size_t tasks = serial[q] ? 1 : (n + kRangeGroups - 1) / kRangeGroups;
    const size_t per = serial[q] ? n : kRangeGroups;
    const int64_t* part_target = target.get() + offset[q - 1];
    const auto target_of = [&](int64_t t) {
      return t >= 0 ? static_cast<size_t>(t) : place[static_cast<size_t>(-(t + 2))];
    };
    run_tasks(parallel, threads, tasks, [&](size_t r) {
      const size_t end = std::min(n, (r + 1) * per);
      for (size_t g = r * per; g < end; ++g) {
        // The targets are scattered over the result's arrays: their cache
        // lines are asked for a few groups ahead, so that the misses overlap.
        if (g + kPrefetchAhead < end && part_target[g + kPrefetchAhead] != kNew) {
          const size_t ahead = target_of(part_target[g + kPrefetchAhead]);
          for (size_t a = 0; a < aggregates; ++a)
            visit_fields(spec.aggregates[a].op,
                         [&](auto member) { __builtin_prefetch(&(out.states[a].*member)[ahead], 1); });
        }
        const int64_t t = part_target[g];
        if (t == kNew) continue;
        const size_t to = target_of(t);
        for (size_t a = 0; a < aggregates; ++a)
          combine_group(spec.aggregates[a].op, out.states[a], to, part.states[a], g);
      }
    });
  }
  return out;
}

}  // namespace tally
