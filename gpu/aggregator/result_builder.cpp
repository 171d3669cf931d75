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


#include "common/prefault.hpp"
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

// One array of the result: `fresh(n)` reserves n elements and returns the
// capacity that `build(n)` will write for the first time; `build(n)` gives
// it its n groups in one pass (a prepared array, already that large, is cut
// to size and overwritten).
struct ArrayJob {
  const char* label;
  std::function<std::pair<unsigned char*, size_t>(uint64_t)> fresh;
  std::function<void(uint64_t)> build;
  // A copy of its source's words as they are (copy_job): which source
  // (a lane, kKeysSource, kNullFlagsSource; kConverted: none), and `place(n)`,
  // which sizes the array to n zeroed elements and returns its data.
  int source = kConverted;
  std::function<unsigned char*(uint64_t)> place;
};

// The job of `out`: group i is value(i, false) for i < ng (the table
// region), else value(direct_at + i - ng, true) (the direct region).
template <class T, class Value>
ArrayJob array_job(const char* label, std::vector<T>& out, uint64_t ng, uint64_t direct_at, Value value) {
  ArrayJob job;
  job.label = label;
  job.fresh = [&out](uint64_t n) -> std::pair<unsigned char*, size_t> {
    if (out.size() >= n) return {nullptr, 0};
    out.clear();  // a partly prepared array's zeros are written again below
    out.reserve(n);
    return {reinterpret_cast<unsigned char*>(out.data()), n * sizeof(T)};
  };
  job.build = [&out, ng, direct_at, value, fresh = job.fresh](uint64_t n) {
    if (out.size() >= n) {
      out.resize(n);
      T* o = out.data();
      for (uint64_t i = 0, end = std::min(n, ng); i < end; ++i) o[i] = value(i, false);
      for (uint64_t i = ng; i < n; ++i) o[i] = value(direct_at + (i - ng), true);
      return;
    }
    // Appended into the reserved capacity: a resize would zero every
    // element only for it to be overwritten.
    fresh(n);
    for (uint64_t i = 0, end = std::min(n, ng); i < end; ++i) out.push_back(value(i, false));
    for (uint64_t i = ng; i < n; ++i) out.push_back(value(direct_at + (i - ng), true));
  };
  return job;
}

// The job of an array copied as it is from `src`, source `source` (table
// region, then the direct region's; `direct_zero`: zeros there instead):
// copied by memcpy.
template <class T>
ArrayJob copy_job(const char* label, std::vector<T>& out, const T* src, uint64_t ng, uint64_t direct_at,
                  bool direct_zero, int source) {
  ArrayJob job = array_job(label, out, ng, direct_at, [src, direct_zero](uint64_t at, bool direct) {
    return direct && direct_zero ? T{} : src[at];
  });
  job.build = [&out, src, ng, direct_at, direct_zero, fresh = job.fresh](uint64_t n) {
    const uint64_t nd = n - std::min(n, ng);
    if (out.size() < n) {
      fresh(n);
      out.insert(out.end(), src, src + (n - nd));
      if (direct_zero) out.resize(n, T{});
      else out.insert(out.end(), src + direct_at, src + direct_at + nd);
      return;
    }
    out.resize(n);
    std::copy(src, src + (n - nd), out.data());
    if (direct_zero) std::fill(out.data() + (n - nd), out.data() + n, T{});
    else std::copy(src + direct_at, src + direct_at + nd, out.data() + (n - nd));
  };
  job.source = source;
  job.place = [&out](uint64_t n) {
    out.resize(n);
    return reinterpret_cast<unsigned char*>(out.data());
  };
  return job;
}

// task(i) for every i in [0, tasks), taken in order by up to `threads`
// threads (this one among them); the first exception (bad_alloc) is
// rethrown here once all have stopped.
void run_tasks(size_t threads, size_t tasks, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::mutex failed_lock;
  std::exception_ptr failed;
  auto work = [&] {
    for (size_t i = next++; i < tasks; i = next++) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed_lock);
        if (!failed) failed = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(threads, tasks); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  if (failed) std::rethrow_exception(failed);
}

// The reserved capacity of every job's array for `total` groups faulted in
// on every core (common/prefault.hpp); the jobs then give the elements
// their values.
void fault_in_arrays(std::vector<ArrayJob>& jobs, uint64_t total) {
  std::vector<MemoryPiece> pieces;
  for (ArrayJob& job : jobs) {
    const auto [first, bytes] = job.fresh(total);
    add_unfaulted_pieces(first, bytes, pieces);
  }
  fault_in(pieces);
}

// Builds the arrays of a large result, each on a thread of its own, their
// fresh pages faulted in by every core first.
void build_in_parallel(std::vector<ArrayJob>& jobs, uint64_t total) {
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  fault_in_arrays(jobs, total);
  run_tasks(std::min<size_t>(threads, kBuildThreads), jobs.size(), [&](size_t j) { jobs[j].build(total); });
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

std::vector<int> count_sources(const GroupBySpec& spec, const LanePlan& plan) {
  if (!spec.compact_result) return {};
  std::vector<int> source(spec.aggregates.size());
  int first = -1;
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    source[a] = static_cast<int>(a);
    const AggOp op = spec.aggregates[a].op;
    const int lane = plan.aggregates[a].nonnull_lane;
    const bool every_row = lane >= 0 && plan.lanes[static_cast<size_t>(lane)].kind == LaneKind::count_rows;
    if (!every_row || op == AggOp::moments_int || op == AggOp::moments_float || op == AggOp::moments2) continue;
    if (first < 0) first = static_cast<int>(a);
    else source[a] = first;
  }
  return source;
}

bool int64_sums(const GroupBySpec& spec, const LanePlan& plan, size_t a) {
  const AggOp op = spec.aggregates[a].op;
  return spec.compact_result && (op == AggOp::sum || op == AggOp::avg) && plan.aggregates[a].value_hi_lane < 0;
}

namespace {

// The result's arrays as jobs over the extracted groups `g` (each array's
// aggregate, op and count source set in `result`, the arrays the jobs fill
// left to them).
std::vector<ArrayJob> result_jobs(const GroupBySpec& spec, const LanePlan& plan, GroupByResult& result,
                                  const ExtractedGroups& g) {
  const char* keys = g.keys;
  const uint64_t* lanes = g.lanes;
  const uint64_t stride = g.stride, ng = g.table_groups, direct_at = g.direct_at;
  // Each result array is a job: sized to the groups (a prepared one, touched
  // while the GPU ran, is cut to size), then filled a range of groups at a
  // time, group i from the table region's position i or the direct region's
  // direct_at + (i - ng).
  std::vector<ArrayJob> jobs;
  auto add = [&](const char* label, auto& out, auto value) {
    jobs.push_back(array_job(label, out, ng, direct_at, value));
  };
  jobs.push_back(
      copy_job("keys", result.keys, reinterpret_cast<const int64_t*>(keys), ng, direct_at, false, kKeysSource));
  // The direct region (the partitioned output) has no NULL key.
  jobs.push_back(copy_job("null flags", result.key_is_null, g.nulls, ng, direct_at, true, kNullFlagsSource));
  // Lane `l` read as signed 64-bit values, as doubles, as ordered float bits.
  auto lane = [&](int l) { return lanes + static_cast<size_t>(l) * stride; };
  auto ints = [&](const char* label, std::vector<int64_t>& out, int l) {
    jobs.push_back(copy_job(label, out, reinterpret_cast<const int64_t*>(lane(l)), ng, direct_at, false, l));
  };
  // A double lane's words are the doubles' bits: copied as they are.
  auto doubles = [&](const char* label, std::vector<double>& out, int l) {
    jobs.push_back(copy_job(label, out, reinterpret_cast<const double*>(lane(l)), ng, direct_at, false, l));
  };
  // Two lanes of 64-bit words as one exact sum (lo unsigned, hi signed in 2^32 units).
  auto wide = [&](int lo_lane, int hi_lane) {
    return [lo = lane(lo_lane), hi = lane(hi_lane)](uint64_t at, bool) {
      return static_cast<__int128>(lo[at]) +
             static_cast<__int128>(static_cast<int64_t>(hi[at])) * (static_cast<__int128>(1) << 32);
    };
  };
  static constexpr const char* kAggregateLabels[] = {"aggregate 0", "aggregate 1", "aggregate 2",
                                                     "aggregate 3", "aggregate 4", "aggregate 5",
                                                     "aggregate 6", "aggregate 7"};
  result.aggregates.resize(spec.aggregates.size());
  result.count_source = count_sources(spec, plan);
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    const AggregateSpec& as = spec.aggregates[a];
    const AggregateLanes& al = plan.aggregates[a];
    AggregateValues& vals = result.aggregates[a];
    vals.op = as.op;
    vals.value64.clear();  // a spare's, unless this aggregate's sums fill it below
    const char* label = a < std::size(kAggregateLabels) ? kAggregateLabels[a] : "aggregates";
    // A count another aggregate holds (compact form) is not copied again.
    if (result.count_source.empty() || result.count_source[a] == static_cast<int>(a))
      ints(label, vals.nonnull, al.nonnull_lane);
    else
      vals.nonnull.clear();
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
        ints(label, vals.extreme, al.value_lane);
        break;
      case AggOp::sum:
      case AggOp::avg:
        vals.extreme.clear();
        if (int64_sums(spec, plan, a)) {
          // The lane's int64 sums are the compact form's as they are.
          vals.value.clear();
          ints(label, vals.value64, al.value_lane);
          break;
        }
        // Wide sums: an unsigned low lane plus a signed high lane counted in 2^32.
        if (al.value_hi_lane >= 0) add(label, vals.value, wide(al.value_lane, al.value_hi_lane));
        else add(label, vals.value, [src = lane(al.value_lane)](uint64_t at, bool) {
          return static_cast<__int128>(static_cast<int64_t>(src[at]));
        });
        break;
      case AggOp::sum_float:
        doubles(label, vals.real, al.value_lane);
        break;
      case AggOp::min_float:
      case AggOp::max_float:
        add(label, vals.real, [src = lane(al.value_lane)](uint64_t at, bool) { return float_from_ordered(src[at]); });
        break;
      case AggOp::moments_int:
        add(label, vals.value, [src = lane(al.value_lane)](uint64_t at, bool) {
          return static_cast<__int128>(static_cast<int64_t>(src[at]));
        });
        add(label, vals.value2, wide(al.square_lane, al.square_hi_lane));
        break;
      case AggOp::moments_float:
        doubles(label, vals.real, al.value_lane);
        doubles(label, vals.squares, al.square_lane);
        break;
      case AggOp::moments2:
        doubles(label, vals.sum_x, al.value_lane);
        doubles(label, vals.sum_xx, al.square_lane);
        doubles(label, vals.sum_y, al.y_lane);
        doubles(label, vals.sum_yy, al.yy_lane);
        doubles(label, vals.sum_xy, al.xy_lane);
        break;
    }
  }
  return jobs;
}

}  // namespace

GroupByResult build_result(const GroupBySpec& spec, const LanePlan& plan, GroupByResult spare,
                           const ExtractedGroups& g) {
  const uint64_t total = g.table_groups + g.direct_groups;
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
  std::vector<ArrayJob> jobs = result_jobs(spec, plan, result, g);
  if (total < kParallelBuildGroups) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      jobs[j].build(total);
      // One mark per region: after its last job.
      if (j + 1 == jobs.size() || jobs[j + 1].label != jobs[j].label) region(jobs[j].label);
    }
  } else {
    build_in_parallel(jobs, total);
    if (timed) host_mark("arrays built", static_cast<long>(jobs.size()), "arrays, their fresh pages faulted in on every core");
  }
  if (timed) host_mark("build switches", thread_usage().switches - switches_at_start, "");
  return result;
}

std::optional<std::vector<PlacedArray>> place_result(const GroupBySpec& spec, const LanePlan& plan,
                                                     GroupByResult& result, uint64_t groups) {
  std::vector<ArrayJob> jobs = result_jobs(spec, plan, result, ExtractedGroups{});
  for (const ArrayJob& job : jobs)
    if (job.source == kConverted) return std::nullopt;
  // Fresh pages faulted in on every core, then each array zeroed on a
  // thread of its own at memory speed.
  fault_in_arrays(jobs, groups);
  std::vector<PlacedArray> placed(jobs.size());
  run_tasks(jobs.size(), jobs.size(),
            [&](size_t j) { placed[j] = PlacedArray{jobs[j].source, jobs[j].place(groups)}; });
  return placed;
}

bool prepare_result_arrays(GroupByResult& spare, const GroupBySpec& spec, const LanePlan& plan, uint64_t n,
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
  const std::vector<int> sources = count_sources(spec, plan);
  for (size_t a = 0; a < A; ++a) {
    AggregateValues& vals = spare.aggregates[a];
    if (sources.empty() || sources[a] == static_cast<int>(a)) touch(vals.nonnull);
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
        if (int64_sums(spec, plan, a)) touch(vals.value64);
        else touch(vals.value);
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
