#include "tests/gpu/group_by_reference.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tally::gpu::test {

HostChunk make_host_chunk(const TestTable& t, size_t begin, size_t end) {
  HostChunk h;
  const size_t n = end - begin;
  h.pointers.rows = static_cast<int64_t>(n);
  if (t.key_type == KeyType::int32) {
    for (size_t r = begin; r < end; ++r) h.keys32.push_back(static_cast<int32_t>(t.keys[r]));
    h.pointers.key.data = h.keys32.data();
  } else {
    h.keys64.assign(t.keys.begin() + static_cast<long>(begin), t.keys.begin() + static_cast<long>(end));
    h.pointers.key.data = h.keys64.data();
  }
  if (!t.key_valid.empty()) h.pointers.key.validity = t.key_valid.data() + begin;
  h.values32.resize(t.values.size());
  h.values64.resize(t.values.size());
  for (size_t c = 0; c < t.values.size(); ++c) {
    ColumnPointer cp;
    if (t.value_types[c] == ValueType::int32) {
      for (size_t r = begin; r < end; ++r) h.values32[c].push_back(static_cast<int32_t>(t.values[c][r]));
      cp.data = h.values32[c].data();
    } else {
      h.values64[c].assign(t.values[c].begin() + static_cast<long>(begin), t.values[c].begin() + static_cast<long>(end));
      cp.data = h.values64[c].data();
    }
    if (!t.value_valid[c].empty()) cp.validity = t.value_valid[c].data() + begin;
    h.pointers.values.push_back(cp);
  }
  // Vectors of size 0 may return null data(): the GPU side accepts rows == 0 without data.
  return h;
}

GroupMap reference_group_by(const TestTable& t, const GroupBySpec& spec) {
  GroupMap m;
  const size_t A = spec.aggregates.size();
  for (size_t r = 0; r < t.rows(); ++r) {
    std::optional<int64_t> key;
    if (t.key_valid.empty() || t.key_valid[r]) key = t.keys[r];
    auto [it, inserted] = m.try_emplace(key);
    GroupValue& g = it->second;
    if (inserted) {
      g.value.assign(A, 0);
      g.nonnull.assign(A, 0);
    }
    for (size_t a = 0; a < A; ++a) {
      const AggregateSpec& as = spec.aggregates[a];
      if (as.op == AggOp::count_star) {
        ++g.value[a];
        ++g.nonnull[a];
        continue;
      }
      const size_t c = static_cast<size_t>(as.column);
      if (!t.value_valid[c].empty() && !t.value_valid[c][r]) continue;
      const int64_t v = t.values[c][r];
      const bool first = g.nonnull[a] == 0;
      ++g.nonnull[a];
      switch (as.op) {
        case AggOp::count: ++g.value[a]; break;
        case AggOp::sum:
        case AggOp::avg: g.value[a] += v; break;
        case AggOp::min: g.value[a] = first ? v : std::min<__int128>(g.value[a], v); break;
        case AggOp::max: g.value[a] = first ? v : std::max<__int128>(g.value[a], v); break;
        case AggOp::count_star: break;
        default: break;  // float aggregates: tests/gpu/gpu_float_aggregates_test.cpp checks them
      }
    }
  }
  return m;
}

GroupMap to_map(const GroupByResult& r) {
  GroupMap m;
  // Each aggregate carries exactly the arrays its partial state takes
  // (group_by_spec.hpp AggregateValues): a count no value copy, min/max
  // their extremes, sums their 128-bit totals.
  const size_t n = r.groups();
  if (r.key_is_null.size() != n) throw std::runtime_error("NULL flags of a different length than the keys");
  for (const AggregateValues& a : r.aggregates) {
    const bool extreme = a.op == AggOp::min || a.op == AggOp::max;
    const bool sum = a.op == AggOp::sum || a.op == AggOp::avg;
    if (a.nonnull.size() != n || a.extreme.size() != (extreme ? n : 0) || a.value.size() != (sum ? n : 0))
      throw std::runtime_error("aggregate arrays of the wrong lengths for its op");
  }
  for (size_t g = 0; g < r.groups(); ++g) {
    std::optional<int64_t> key;
    if (!r.key_is_null[g]) key = r.keys[g];
    GroupValue v;
    for (const AggregateValues& a : r.aggregates) {
      v.nonnull.push_back(a.nonnull[g]);
      // SQL NULL results carry no value: normalize so comparisons ignore it.
      v.value.push_back(a.nonnull[g] == 0 ? 0 : a.value_at(g));
    }
    if (!m.emplace(key, std::move(v)).second) throw std::runtime_error("duplicate group in GPU result");
  }
  return m;
}

}  // namespace tally::gpu::test
