#include "gpu/tuner/search_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tally::gpu {
namespace {

SearchSpace grid() {
  return SearchSpace({{ConfigDimension::threads_per_block, SearchSpace::powers_of_two(32, 1024)},
                      {ConfigDimension::blocks_per_sm, SearchSpace::powers_of_two(1, 32)},
                      {ConfigDimension::fill_factor_percent, {25, 50, 83}}});
}

TEST(SearchSpace, EnumeratesTheGrid) {
  const SearchSpace s = grid();
  EXPECT_EQ(s.size(), 6u * 6u * 3u);
  const auto all = s.all();
  EXPECT_EQ(std::set<LaunchConfig>(all.begin(), all.end()).size(), all.size());
  for (const auto& c : all) EXPECT_TRUE(s.contains(c));
}

TEST(SearchSpace, NeighboursStepOneAlongEachAxisAndTheThreadDiagonal) {
  const SearchSpace s = grid();
  LaunchConfig c;
  c.threads_per_block = 256;
  c.blocks_per_sm = 4;
  c.fill_factor_percent = 50;
  const auto n = s.neighbours(c);
  EXPECT_EQ(n.size(), 8u);  // 2 per axis + 2 diagonal
  for (const auto& m : n) EXPECT_TRUE(s.contains(m));
  LaunchConfig diag = c;
  diag.threads_per_block = 512;
  diag.blocks_per_sm = 2;
  EXPECT_NE(std::find(n.begin(), n.end(), diag), n.end());

  LaunchConfig corner;
  corner.threads_per_block = 32;
  corner.blocks_per_sm = 1;
  corner.fill_factor_percent = 25;
  EXPECT_EQ(s.neighbours(corner).size(), 3u);  // only the upward steps
}

TEST(SearchSpace, SnapsToTheNearestGridPoint) {
  const SearchSpace s = grid();
  LaunchConfig c;
  c.threads_per_block = 200;  // log-nearest is 256
  c.blocks_per_sm = 100;      // beyond the grid: 32
  c.fill_factor_percent = 60;
  const auto snapped = s.snap(c);
  EXPECT_EQ(snapped.threads_per_block, 256);
  EXPECT_EQ(snapped.blocks_per_sm, 32);
  EXPECT_EQ(snapped.fill_factor_percent, 50);
  EXPECT_TRUE(s.contains(snapped));
}

TEST(LaunchConfig, TextFormRoundTrips) {
  LaunchConfig c;
  c.threads_per_block = 128;
  c.blocks_per_sm = 16;
  c.fill_factor_percent = 83;
  c.rows_per_thread = 4;
  EXPECT_EQ(to_string(c), "tpb=128,bps=16,ff=83,rpt=4");
  EXPECT_EQ(parse_launch_config(to_string(c)), c);
  EXPECT_FALSE(parse_launch_config("tpb=abc"));
  EXPECT_FALSE(parse_launch_config("nonsense=1"));
  EXPECT_FALSE(parse_launch_config("tpb=-4"));
  EXPECT_EQ(c.grid_blocks(132), 16 * 132);
}

}  // namespace
}  // namespace tally::gpu
