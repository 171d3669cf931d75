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
  // Every array is written once: a prepared one (touched while the GPU
  // ran) is cut to size and overwritten; else reserved and assigned,
  // converting as it copies (a resize-then-overwrite would write every
  // array twice).
  // Region [0, ng) then [direct_at, direct_at + nd) of `src` into `out`.
  auto gather = [&](const auto* src, auto& out) {
    if (out.size() >= total) {
      out.resize(total);
      std::copy(src, src + ng, out.data());
      std::copy(src + direct_at, src + direct_at + nd, out.data() + ng);
    } else {
      out.clear();
      out.reserve(total);
      out.assign(src, src + ng);
      out.insert(out.end(), src + direct_at, src + direct_at + nd);
    }
  };
  // Each array is its own job: at a million groups and more they run on
  // several threads (each array's copy and page faults on its own thread);
  // below, one after the other with the EXPLAIN ANALYZE marks per region.
  std::vector<std::pair<const char*, std::function<void()>>> jobs;
  jobs.emplace_back("keys", [&] { gather(reinterpret_cast<const int64_t*>(keys), result.keys); });
  jobs.emplace_back("null flags", [&] {
    if (result.key_is_null.size() >= total) {
      result.key_is_null.resize(total);
      std::memcpy(result.key_is_null.data(), g.nulls, ng);
      std::memset(result.key_is_null.data() + ng, 0, nd);  // the partitioned output has no NULL key
    } else {
      result.key_is_null.clear();
      result.key_is_null.reserve(total);
      result.key_is_null.assign(g.nulls, g.nulls + ng);
      result.key_is_null.resize(total, 0);
    }
  });
  // Lane `l` as one contiguous column of `total` values, each the lane's
  // 64 bits read as signed and converted to the array's type.
  auto column = [&](int l, auto& out) {
    gather(reinterpret_cast<const int64_t*>(lanes + static_cast<size_t>(l) * stride), out);
  };
  // Lane `l` read as doubles (the float sums) into `out`.
  auto doubles = [&](int l, std::vector<double>& out) {
    out.resize(total);
    const uint64_t* src = lanes + static_cast<size_t>(l) * stride;
    auto at = [](uint64_t bits) { return std::bit_cast<double>(bits); };
    for (uint64_t i = 0; i < ng; ++i) out[i] = at(src[i]);
    for (uint64_t i = 0; i < nd; ++i) out[ng + i] = at(src[direct_at + i]);
  };
  // Two lanes of 64-bit words as one exact sum (lo unsigned, hi signed in 2^32 units).
  auto wide_sum = [&](int lo_lane, int hi_lane, std::vector<__int128>& out) {
    if (out.size() < total) out.clear();  // not prepared: a fresh array
    out.resize(total);
    const uint64_t* lo = lanes + static_cast<size_t>(lo_lane) * stride;
    const uint64_t* hi = lanes + static_cast<size_t>(hi_lane) * stride;
    auto wide = [](uint64_t l, uint64_t h) {
      return static_cast<__int128>(l) + static_cast<__int128>(static_cast<int64_t>(h)) * (static_cast<__int128>(1) << 32);
    };
    __int128* o = out.data();
    for (uint64_t i = 0; i < ng; ++i) o[i] = wide(lo[i], hi[i]);
    for (uint64_t i = 0; i < nd; ++i) o[ng + i] = wide(lo[direct_at + i], hi[direct_at + i]);
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
    jobs.emplace_back(label, [&, al, v = &vals] { column(al.nonnull_lane, v->nonnull); });
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
        jobs.emplace_back(label, [&, al, v = &vals] { column(al.value_lane, v->extreme); });
        break;
      case AggOp::sum:
      case AggOp::avg:
        vals.extreme.clear();
        // Wide sums: an unsigned low lane plus a signed high lane counted in 2^32.
        if (al.value_hi_lane >= 0) jobs.emplace_back(label, [&, al, v = &vals] { wide_sum(al.value_lane, al.value_hi_lane, v->value); });
        else jobs.emplace_back(label, [&, al, v = &vals] { column(al.value_lane, v->value); });
        break;
      case AggOp::sum_float:
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.value_lane, v->real); });
        break;
      case AggOp::min_float:
      case AggOp::max_float:
        jobs.emplace_back(label, [&, al, v = &vals] {
          v->real.resize(total);
          const uint64_t* src = lanes + static_cast<size_t>(al.value_lane) * stride;
          for (uint64_t i = 0; i < ng; ++i) v->real[i] = float_from_ordered(src[i]);
          for (uint64_t i = 0; i < nd; ++i) v->real[ng + i] = float_from_ordered(src[direct_at + i]);
        });
        break;
      case AggOp::moments_int:
        jobs.emplace_back(label, [&, al, v = &vals] { column(al.value_lane, v->value); });
        jobs.emplace_back(label, [&, al, v = &vals] { wide_sum(al.square_lane, al.square_hi_lane, v->value2); });
        break;
      case AggOp::moments_float:
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.value_lane, v->real); });
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.square_lane, v->squares); });
        break;
      case AggOp::moments2:
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.value_lane, v->sum_x); });
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.square_lane, v->sum_xx); });
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.y_lane, v->sum_y); });
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.yy_lane, v->sum_yy); });
        jobs.emplace_back(label, [&, al, v = &vals] { doubles(al.xy_lane, v->sum_xy); });
        break;
    }
  }
  if (total < kParallelBuildGroups) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      jobs[j].second();
      // One mark per region: after its last job.
      if (j + 1 == jobs.size() || jobs[j + 1].first != jobs[j].first) region(jobs[j].first);
    }
  } else {
    // Jobs taken in order by up to kBuildThreads threads (this one among them).
    std::atomic<size_t> next{0};
    std::mutex failed_lock;
    std::exception_ptr failed;  // the first job's exception (bad_alloc), rethrown here
    auto work = [&] {
      for (size_t j = next++; j < jobs.size(); j = next++) {
        try {
          jobs[j].second();
        } catch (...) {
          std::lock_guard<std::mutex> lock(failed_lock);
          if (!failed) failed = std::current_exception();
        }
      }
    };
    std::vector<std::thread> helpers;
    const size_t extra = std::min(jobs.size(), kBuildThreads) - 1;
    for (size_t t = 0; t < extra; ++t) helpers.emplace_back(work);
    work();
    for (std::thread& t : helpers) t.join();
    if (failed) std::rethrow_exception(failed);
    if (timed) host_mark("arrays built", static_cast<long>(jobs.size()), "jobs in parallel");
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
