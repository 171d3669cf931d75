#include "bench/tuner/recorded_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/rules/cold_start_rules.hpp"

namespace tally::bench {
namespace {

TEST(RecordedSpace, WritesAndReadsBack) {
  RecordedSpaces spaces;
  spaces.metadata["device"] = "reference GPU";
  spaces.metadata["sm_count"] = "132";
  spaces.metadata["l2_cache_bytes"] = "52428800";
  gpu::LaunchConfig a, b;
  b.threads_per_block = 1024;
  b.fill_factor_percent = 83;
  spaces.cells.push_back({"global", 4096, {{a, {2.5e-11, 2.0e-11}}, {b, {3e-11}}}});
  spaces.cells.push_back({"sort", 1, {{a, {1e-10}}}});
  std::stringstream file;
  write_spaces(file, spaces);
  const RecordedSpaces back = read_spaces(file);
  ASSERT_EQ(back.cells.size(), 2u);
  EXPECT_EQ(back.cells[0].variant, "global");
  EXPECT_EQ(back.cells[0].groups, 4096u);
  ASSERT_EQ(back.cells[0].times.size(), 2u);
  EXPECT_EQ(back.cells[0].times.at(a), (std::vector<double>{2.5e-11, 2.0e-11}));
  EXPECT_EQ(back.cells[0].times.at(b), (std::vector<double>{3e-11}));
  const auto device = back.device();
  EXPECT_EQ(device.name, "reference GPU");
  EXPECT_EQ(device.sm_count, 132);
  EXPECT_EQ(device.l2_bytes, 52428800u);
}

TEST(RecordedSpace, MalformedLinesAreReportedWithTheirNumber) {
  const std::string header =
      "variant,groups,threads_per_block,blocks_per_sm,fill_factor_percent,rows_per_thread,repetition,seconds_per_row\n";
  auto expect_error = [](const std::string& text, const std::string& line) {
    std::stringstream in(text);
    try {
      read_spaces(in);
      FAIL() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("line " + line), std::string::npos) << e.what();
    }
  };
  expect_error("global,1,32,1,50,1,0,1e-9\n", "1");                      // no column header
  expect_error(header + "global,1,32,1,50,1,0\n", "2");                 // 7 fields
  expect_error(header + "global,x,32,1,50,1,0,1e-9\n", "2");            // not a number
  expect_error(header + "global,1,32,1,50,1,0,-1\n", "2");              // negative time
  expect_error(header + "global,1,32,1,50,1,1,1e-9\n", "2");            // repetition 1 before 0
}

// The rules' priors (rules_prior_slowdown) rank the variants as the recorded
// spaces do at few groups: a prior is a ranking from the device's own
// properties, checked here, never fitted to these times. Variants with no
// prior (1) make no claim; every pair the priors order must be ordered so in
// the recording (best configuration of each variant), and global, the one
// the rules put last, must be the recording's slowest.
TEST(RecordedSpace, ThePriorsRankTheVariantsAsTheRecordedSpacesDoAtFewGroups) {
  std::ifstream file(std::string(TALLY_SOURCE_DIR) + "/bench/tuner/data/h100_spaces.csv");
  ASSERT_TRUE(file) << "bench/tuner/data/h100_spaces.csv";
  const RecordedSpaces spaces = read_spaces(file);
  const gpu::DeviceInfo device = spaces.device();
  for (uint64_t groups : {uint64_t{1}, uint64_t{16}, uint64_t{256}}) {
    std::map<std::string, double> best;
    for (const auto& cell : spaces.cells) {
      if (cell.groups != groups) continue;
      for (const auto& [config, reps] : cell.times) {
        const double t = *std::min_element(reps.begin(), reps.end());
        if (!best.count(cell.variant) || t < best[cell.variant]) best[cell.variant] = t;
      }
    }
    ASSERT_EQ(best.size(), 5u) << groups;
    gpu::AggregationShape shape;
    shape.estimated_groups = static_cast<double>(groups);
    shape.key_bytes = static_cast<int>(spaces.metadata_int("key_bytes", 4));
    shape.state_bytes = static_cast<int>(spaces.metadata_int("state_bytes", 16));
    shape.dense_key_range = true;
    std::map<std::string, double> prior;
    for (const auto& [v, t] : best) prior[v] = gpu::rules_prior_slowdown(device, shape, *gpu::parse_variant(v));
    EXPECT_GT(prior["global"], prior["sort"]) << groups;
    EXPECT_GT(prior["sort"], prior["partitioned"]) << groups;
    EXPECT_GT(prior["partitioned"], 1) << groups;
    EXPECT_EQ(prior["dense"], 1) << groups;
    for (const auto& [a, pa] : prior)
      for (const auto& [b, pb] : prior)
        if (pa > pb) EXPECT_GT(best[a], best[b]) << groups << ": prior ranks " << a << " behind " << b;
    const auto slowest = std::max_element(best.begin(), best.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    EXPECT_EQ(slowest->first, "global") << groups;
  }
  // At 2^16 groups (the live query) neither global nor partitioned has a
  // prior: the recording has them within 2% of each other there.
  gpu::AggregationShape live;
  live.estimated_groups = 65536;
  live.key_bytes = 4;
  live.state_bytes = 16;
  EXPECT_EQ(gpu::rules_prior_slowdown(device, live, gpu::Variant::global_hash), 1);
  EXPECT_EQ(gpu::rules_prior_slowdown(device, live, gpu::Variant::partitioned_hash), 1);
}

}  // namespace
}  // namespace tally::bench
