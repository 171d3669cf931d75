#include "bench/tuner/recorded_space.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace tally::bench {
namespace {

TEST(RecordedSpace, WritesAndReadsBack) {
  RecordedSpaces spaces;
  spaces.metadata["device"] = "NVIDIA H100 80GB HBM3";
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
  EXPECT_EQ(device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(device.sm_count, 132);
  EXPECT_EQ(device.l2_cache_bytes, 52428800);
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

}  // namespace
}  // namespace tally::bench
