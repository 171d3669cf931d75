#include "gpu/aggregator/result_builder.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <iterator>
#include <thread>
#include <utility>
#include <vector>

#include "common/for_parts.hpp"
#include "gpu/host_steps.hpp"

namespace tally::gpu::aggregator {

namespace {
// prepare_result_arrays() zeroes this much between two looks at whether the
// GPU is done: a step takes tens of microseconds, an event query about one.
constexpr uint64_t kPrepareStepBytes = 256 * 1024;
// From this many groups the result's arrays are built on several threads
// (each a few megabytes: the threads' start is small beside one array).
constexpr uint64_t kParallelBuildGroups = uint64_t{1} << 18;
constexpr size_t kBuildThreads = 8;
// The fewest groups a thread of the build fills (64K: half a megabyte of
// each 8-byte array).
constexpr uint64_t kBuildPartGroups = uint64_t{1} << 16;

// Threads that fill the result's arrays: every core, at most 16 (the copies
// are bound by the memory's bandwidth well before).
size_t build_threads() {
  return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
}
}  // namespace

double float_from_ordered(uint64_t bits) {
  const auto o = static_cast<int64_t>(bits);
  return std::bit_cast<double>(o ^ ((o >> 63) & INT64_MAX));
}

std::vector<LaneTest> lane_tests(const GroupBySpec& spec, const LanePlan& plan, const std::vector<GroupTest>& tests) {
  std::vector<LaneTest> out;
  for (const GroupTest& t : tests) {
    if (t.aggregate >= spec.aggregates.size() || t.aggregate >= plan.aggregates.size()) continue;
    const AggregateLanes& al = plan.aggregates[t.aggregate];
    LaneTest lt{al.nonnull_lane, -1, -1, t.test};
    if (!t.on_count) {
      const AggOp op = spec.aggregates[t.aggregate].op;
      if (op != AggOp::sum && op != AggOp::min && op != AggOp::max) continue;
      if (al.value_lane < 0) continue;
      lt.value_lane = al.value_lane;
      if (op == AggOp::sum && al.value_hi_lane >= 0) lt.value_hi_lane = al.value_hi_lane;
    }
    out.push_back(lt);
  }
  return out;
}

ExtractedGroups keep_passing_groups(const GroupBySpec& spec, const LanePlan& plan, const std::vector<GroupTest>& tests,
                                    const ExtractedGroups& g, uint64_t& dropped) {
  dropped = 0;
  const uint64_t ng = g.table_groups, nd = g.direct_groups, total = ng + nd;
  const std::vector<LaneTest> tested = lane_tests(spec, plan, tests);
  if (tested.empty() || total == 0) return g;
  auto passes = [&](uint64_t at) {
    for (const LaneTest& t : tested) {
      if (!lane_test_passes(t, g.lanes, g.stride, at)) return false;
    }
    return true;
  };
  // Positions kept ([0, ng) then the direct region), listed per range of
  // groups on several threads, joined in order.
  const size_t parts = total < kParallelBuildGroups ? 1 : kBuildThreads;
  const uint64_t per = (total + parts - 1) / parts;
  std::vector<std::vector<uint64_t>> kept(parts);
  auto scan = [&](size_t part) {
    for (uint64_t i = part * per; i < std::min(total, (part + 1) * per); ++i) {
      const uint64_t at = i < ng ? i : g.direct_at + (i - ng);
      if (passes(at)) kept[part].push_back(at);
    }
  };
  std::vector<std::thread> helpers;
  for (size_t p = 1; p < parts; ++p) helpers.emplace_back(scan, p);
  scan(0);
  for (std::thread& t : helpers) t.join();
  uint64_t n = 0;
  for (const auto& k : kept) n += k.size();
  // Kept in place only where they fit the table region's NULL flags (the
  // checked path copies flags for the table's groups alone).
  if (2 * n > total || n > ng) return g;
  // Moved forward in order: each destination is at or before its source.
  auto* keys = reinterpret_cast<int64_t*>(const_cast<char*>(g.keys));
  auto* lanes = const_cast<uint64_t*>(g.lanes);
  auto* nulls = const_cast<uint8_t*>(g.nulls);
  uint64_t to = 0;
  for (const auto& k : kept) {
    for (const uint64_t from : k) {
      keys[to] = keys[from];
      nulls[to] = from < ng ? nulls[from] : 0;  // the direct region has no NULL key
      for (size_t l = 0; l < plan.lanes.size(); ++l) lanes[l * g.stride + to] = lanes[l * g.stride + from];
      ++to;
    }
  }
  dropped = total - n;
  ExtractedGroups out = g;
  out.table_groups = n;
  out.direct_groups = 0;
  return out;
}

GroupByResult build_result(const GroupBySpec& spec, const LanePlan& plan, GroupByResult spare,
                           const ExtractedGroups& g) {
  const char* keys = g.keys;
  const uint64_t* lanes = g.lanes;
  const uint64_t stride = g.stride, ng = g.table_groups, direct_at = g.direct_at,
                 nd = g.direct_groups;
  const uint64_t total = ng + nd;
  const bool timed = active_host_timeline() != nullptr;
  ThreadUsage usage = timed ? thread_usage() : ThreadUsage{};
  if (timed) {
    host_mark("build on cpu", sched_getcpu(), "");
    host_mark("clock probe", clock_probe_mhz(), "MHz");
  }
  const long switches_at_start = usage.switches;
  // Marks a region with the faults taken since the last.
  auto region = [&](const char* label) {
    if (!timed) return;
    const ThreadUsage now = thread_usage();
    host_mark(label, now.minor_faults - usage.minor_faults, "faults");
    usage = now;
  };
  GroupByResult result = std::move(spare);
  // Each array is one job: sized to `total` (a prepared array, touched while
  // the GPU ran, is only cut to size), then filled a range of groups at a
  // time, each entry converted from its lane as it is copied. Output entry i
  // comes from entry i of the table region for i < ng, else from entry
  // direct_at + (i - ng) of the direct region.
  struct ArrayJob {
    const char* label;
    std::function<void()> size;
    std::function<void(uint64_t begin, uint64_t end)> fill;
  };
  auto sized = [total](auto& out) {
    if (out.size() >= total) {
      out.resize(total);
    } else {
      out.clear();
      out.resize(total);
    }
  };
  // f(out_at, src_at, count) over the pieces of [begin, end) in each region.
  auto for_regions = [=](uint64_t begin, uint64_t end, auto&& f) {
    if (begin < ng) f(begin, begin, std::min(end, ng) - begin);
    if (end > ng) {
      const uint64_t b = std::max(begin, ng);
      f(b, direct_at + (b - ng), end - b);
    }
  };
  std::vector<ArrayJob> jobs;
  // `out` from the 64-bit words at `src`, each converted by `convert`.
  auto add_job = [&](const char* label, auto& out, const uint64_t* src, auto convert) {
    jobs.push_back({label, [&out, sized] { sized(out); },
                    [&out, src, convert, for_regions](uint64_t begin, uint64_t end) {
                      auto* o = out.data();
                      for_regions(begin, end, [&](uint64_t at, uint64_t from, uint64_t n) {
                        for (uint64_t i = 0; i < n; ++i) o[at + i] = convert(src[from + i]);
                      });
                    }});
  };
  auto lane = [&](int l) { return lanes + static_cast<size_t>(l) * stride; };
  auto as_signed = [](uint64_t bits) { return static_cast<int64_t>(bits); };
  auto as_double = [](uint64_t bits) { return std::bit_cast<double>(bits); };
  add_job("keys", result.keys, reinterpret_cast<const uint64_t*>(keys), as_signed);
  jobs.push_back({"null flags", [&] { sized(result.key_is_null); }, [&](uint64_t begin, uint64_t end) {
                    uint8_t* o = result.key_is_null.data();
                    // The partitioned output has no NULL key.
                    if (begin < ng) std::memcpy(o + begin, g.nulls + begin, std::min(end, ng) - begin);
                    if (end > ng) std::memset(o + std::max(begin, ng), 0, end - std::max(begin, ng));
                  }});
  // Two lanes of 64-bit words as one exact sum (lo unsigned, hi signed in 2^32 units).
  auto add_wide_sum = [&](const char* label, int lo_lane, int hi_lane, std::vector<__int128>& out) {
    const uint64_t* lo = lane(lo_lane);
    const uint64_t* hi = lane(hi_lane);
    jobs.push_back({label, [&out, sized] { sized(out); }, [&out, lo, hi, for_regions](uint64_t begin, uint64_t end) {
                      __int128* o = out.data();
                      for_regions(begin, end, [&](uint64_t at, uint64_t from, uint64_t n) {
                        for (uint64_t i = 0; i < n; ++i)
                          o[at + i] = static_cast<__int128>(lo[from + i]) +
                                      static_cast<__int128>(static_cast<int64_t>(hi[from + i])) *
                                          (static_cast<__int128>(1) << 32);
                      });
                    }});
  };
  static constexpr const char* kAggregateLabels[] = {"aggregate 0", "aggregate 1", "aggregate 2",
                                                     "aggregate 3", "aggregate 4", "aggregate 5",
                                                     "aggregate 6", "aggregate 7"};
  result.aggregates.resize(spec.aggregates.size());
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    const AggregateSpec& as = spec.aggregates[a];
    const AggregateLanes& al = plan.aggregates[a];
    AggregateValues& vals = result.aggregates[a];
    vals.op = as.op;
    const char* label = a < std::size(kAggregateLabels) ? kAggregateLabels[a] : "aggregates";
    add_job(label, vals.nonnull, lane(al.nonnull_lane), as_signed);
    switch (as.op) {
      case AggOp::count_star:
      case AggOp::count:
        // The count is `nonnull` (value_at): no other array.
        vals.value.clear();
        vals.extreme.clear();
        break;
      case AggOp::min:
      case AggOp::max:
        vals.value.clear();
        add_job(label, vals.extreme, lane(al.value_lane), as_signed);
        break;
      case AggOp::sum:
      case AggOp::avg:
        vals.extreme.clear();
        // Wide sums: an unsigned low lane plus a signed high lane counted in 2^32.
        if (al.value_hi_lane >= 0) add_wide_sum(label, al.value_lane, al.value_hi_lane, vals.value);
        else add_job(label, vals.value, lane(al.value_lane), [](uint64_t bits) { return static_cast<__int128>(static_cast<int64_t>(bits)); });
        break;
      case AggOp::sum_float:
        add_job(label, vals.real, lane(al.value_lane), as_double);
        break;
      case AggOp::min_float:
      case AggOp::max_float:
        add_job(label, vals.real, lane(al.value_lane), float_from_ordered);
        break;
      case AggOp::moments_int:
        add_job(label, vals.value, lane(al.value_lane), [](uint64_t bits) { return static_cast<__int128>(static_cast<int64_t>(bits)); });
        add_wide_sum(label, al.square_lane, al.square_hi_lane, vals.value2);
        break;
      case AggOp::moments_float:
        add_job(label, vals.real, lane(al.value_lane), as_double);
        add_job(label, vals.squares, lane(al.square_lane), as_double);
        break;
      case AggOp::moments2:
        add_job(label, vals.sum_x, lane(al.value_lane), as_double);
        add_job(label, vals.sum_xx, lane(al.square_lane), as_double);
        add_job(label, vals.sum_y, lane(al.y_lane), as_double);
        add_job(label, vals.sum_yy, lane(al.yy_lane), as_double);
        add_job(label, vals.sum_xy, lane(al.xy_lane), as_double);
        break;
    }
  }
  if (total < kParallelBuildGroups) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      jobs[j].size();
      jobs[j].fill(0, total);
      // One mark per region: after its last job.
      if (j + 1 == jobs.size() || jobs[j + 1].label != jobs[j].label) region(jobs[j].label);
    }
  } else {
    // The arrays sized side by side (each one's zero fill, the first touch of
    // fresh pages, on a thread of its own), then filled a range of groups per
    // thread on every core: one thread per array copied 800 MB each at 1e8
    // groups, and the largest array's copy was the build's time.
    for_parts(std::min(jobs.size(), build_threads()), jobs.size(), [&](size_t, size_t begin, size_t end) {
      for (size_t j = begin; j < end; ++j) jobs[j].size();
    });
    if (timed) host_mark("arrays sized", static_cast<long>(jobs.size()), "arrays");
    const size_t parts = std::min<size_t>(build_threads(), (total + kBuildPartGroups - 1) / kBuildPartGroups);
    for_parts(parts, total, [&](size_t, size_t begin, size_t end) {
      for (const ArrayJob& job : jobs) job.fill(begin, end);
    });
    if (timed) host_mark("arrays built", static_cast<long>(parts), "threads");
  }
  if (timed) host_mark("build switches", thread_usage().switches - switches_at_start, "");
  return result;
}

bool prepare_result_arrays(GroupByResult& spare, const GroupBySpec& spec, uint64_t n,
                           const std::function<bool()>& gpu_busy_now) {
  const size_t A = spec.aggregates.size();
  // Grown a step at a time (value-initialized: the zero fill is the first
  // touch) and only while the GPU is still busy: once it is done the rest is
  // left to the build, so a short query never waits for its arrays being
  // zeroed. A partly grown array keeps its capacity, which the build writes
  // into.
  bool gpu_busy = true;
  auto touch = [&](auto& v) {
    if (v.size() >= n) return;
    if (v.capacity() < n) {
      v.clear();
      v.reserve(n);
    }
    const uint64_t step = std::max<uint64_t>(1, kPrepareStepBytes / sizeof(v[0]));
    while (gpu_busy && v.size() < n) {
      if (!gpu_busy_now())
        gpu_busy = false;  // done (or failed: the wait says)
      else
        v.resize(std::min<uint64_t>(n, v.size() + step));
    }
  };
  touch(spare.keys);
  touch(spare.key_is_null);
  spare.aggregates.resize(A);
  for (size_t a = 0; a < A; ++a) {
    AggregateValues& vals = spare.aggregates[a];
    touch(vals.nonnull);
    switch (spec.aggregates[a].op) {
      case AggOp::count_star:
      case AggOp::count:
        break;
      case AggOp::min:
      case AggOp::max:
        touch(vals.extreme);
        break;
      case AggOp::sum:
      case AggOp::avg:
        touch(vals.value);
        break;
      case AggOp::sum_float:
      case AggOp::min_float:
      case AggOp::max_float:
        touch(vals.real);
        break;
      case AggOp::moments_int:
        touch(vals.value);
        touch(vals.value2);
        break;
      case AggOp::moments_float:
        touch(vals.real);
        touch(vals.squares);
        break;
      case AggOp::moments2:
        for (std::vector<double>* v : {&vals.sum_x, &vals.sum_xx, &vals.sum_y, &vals.sum_yy, &vals.sum_xy}) touch(*v);
        break;
    }
  }
  return gpu_busy;
}

}  // namespace tally::gpu::aggregator
