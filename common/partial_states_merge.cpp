#include "common/partial_states_merge.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace tally {

bool mergeable(const AggregationSpec& spec) {
  if (spec.key_tuple) return false;
  for (const PartialAggregate& a : spec.aggregates) {
    if (a.op == PartialOp::ordered_values || a.op == PartialOp::count_distinct) return false;
  }
  return true;
}

AggregationResult merge_results(const AggregationSpec& spec, std::vector<AggregationResult> parts) {
  if (parts.empty()) return {};
  // The largest part is the base: its groups are never looked up one by one.
  auto largest = std::max_element(parts.begin(), parts.end(), [](const AggregationResult& a, const AggregationResult& b) {
    return a.groups() < b.groups();
  });
  std::iter_swap(parts.begin(), largest);
  AggregationResult out = std::move(parts.front());
  if (out.key_valid.size() < out.keys.size()) out.key_valid.resize(out.keys.size(), 1);
  std::unordered_map<int64_t, size_t> index;
  index.reserve(out.groups());
  size_t null_group = SIZE_MAX;
  for (size_t g = 0; g < out.groups(); ++g) {
    if (out.key_valid[g]) index.emplace(out.keys[g], g);
    else null_group = g;
  }
  const size_t aggregates = spec.aggregates.size();
  for (size_t p = 1; p < parts.size(); ++p) {
    const AggregationResult& part = parts[p];
    for (size_t g = 0; g < part.groups(); ++g) {
      const bool valid = g >= part.key_valid.size() || part.key_valid[g] != 0;
      size_t to = SIZE_MAX;
      if (valid) {
        auto [it, added] = index.try_emplace(part.keys[g], out.groups());
        if (!added) to = it->second;
      } else if (null_group != SIZE_MAX) {
        to = null_group;
      } else {
        null_group = out.groups();
      }
      if (to != SIZE_MAX) {
        for (size_t a = 0; a < aggregates; ++a) combine_group(spec.aggregates[a].op, out.states[a], to, part.states[a], g);
        continue;
      }
      out.keys.push_back(part.keys[g]);
      out.key_valid.push_back(valid ? 1 : 0);
      for (size_t a = 0; a < aggregates; ++a) {
        visit_fields(spec.aggregates[a].op, [&](auto member) {
          (out.states[a].*member).push_back((part.states[a].*member)[g]);
        });
      }
    }
  }
  return out;
}

}  // namespace tally
