// The comparison h2o_bench judges answers by: a difference it must report is
// reported, and what the benchmark allows (float rounding, DuckDB's float8 for
// PostgreSQL's numeric) is not.
#include "bench/common/answer_rows.hpp"

#include <gtest/gtest.h>

#include "bench/h2o/groupby_data.hpp"
#include "bench/h2o/groupby_stream.hpp"

namespace tally::bench::h2o {
namespace {

class Rows : public RowSource {
 public:
  explicit Rows(std::vector<Row> rows) : rows_(std::move(rows)) {}
  bool next(Row& row) override {
    if (at_ >= rows_.size()) return false;
    row = rows_[at_++];
    return true;
  }

 private:
  std::vector<Row> rows_;
  size_t at_ = 0;
};

Cell cell(bool null, bool approx, const char* t) {
  Cell c;
  c.null = null;
  c.approx = approx;
  c.text = t;
  return c;
}
Cell text(const char* t) { return cell(false, false, t); }
Cell real(const char* t) { return cell(false, true, t); }
Cell null() { return cell(true, false, ""); }

TEST(H2oAnswerRows, FloatsWithinOneInABillionRelative) {
  EXPECT_TRUE(same_value(real("1234.5678"), real("1234.567800000001")));
  EXPECT_FALSE(same_value(real("1234.5678"), real("1234.5679")));
  EXPECT_TRUE(same_value(text("2.5000000000000000"), real("2.5")));  // numeric avg vs DuckDB's double
}

TEST(H2oAnswerRows, IntegersTextAndNullsExactly) {
  EXPECT_FALSE(same_value(text("2.5000"), text("2.5")));
  EXPECT_FALSE(same_value(text("10"), text("11")));
  EXPECT_FALSE(same_value(null(), text("0")));
  EXPECT_TRUE(same_value(null(), null()));
}

TEST(H2oAnswerRows, ReportsTheFirstDifferentRowAndMissingRows) {
  Rows a({{text("id001"), text("1")}, {text("id002"), text("2")}});
  Rows b({{text("id001"), text("1")}, {text("id002"), text("3")}});
  const Comparison c = compare_rows(a, b, "Tally", "PostgreSQL", false);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.rows, 1u);
  Rows shorter({{text("id001")}});
  Rows longer({{text("id001")}, {text("id002")}});
  EXPECT_FALSE(compare_rows(shorter, longer, "Tally", "PostgreSQL", false).equal);
  Rows x({{text("id001"), real("0.5")}});
  Rows y({{text("id001"), real("0.5000000000001")}});
  EXPECT_TRUE(compare_rows(x, y, "Tally", "PostgreSQL", false).equal);
}

TEST(H2oGroupbyData, SameSeedSameCsvAndExactNullCounts) {
  GroupbyParams p;
  p.rows = 1000;
  p.k = 10;
  p.na_percent = 5;
  auto csv = [&p] {
    GroupbyGenerator gen(p);
    std::string all, block;
    for (bool more = true; more;) {
      block.clear();
      more = gen.next_block(block, 1 << 12);
      all += block;
    }
    return all;
  };
  const std::string first = csv();
  const std::string second = csv();
  EXPECT_EQ(first, second);
  // 5% of 1000 rows in each of the nine columns: 50 empty fields per column.
  std::vector<int> empty(9, 0);
  size_t line_start = first.find('\n') + 1;
  int lines = 0;
  while (line_start < first.size()) {
    const size_t end = first.find('\n', line_start);
    int column = 0;
    size_t field = line_start;
    for (size_t i = line_start; i <= end; ++i) {
      if (i == end || first[i] == ',') {
        if (i == field) ++empty[static_cast<size_t>(column)];
        ++column;
        field = i + 1;
      }
    }
    EXPECT_EQ(column, 9);
    ++lines;
    line_start = end + 1;
  }
  EXPECT_EQ(lines, 1000);
  for (int n : empty) EXPECT_EQ(n, 50);
}

// The parallel stream h2o_bench loads with writes the sequential generator's
// bytes: with NULLs, sorted, over several threads, and a last block that is
// not full.
TEST(H2oGroupbyData, ParallelStreamWritesTheSameCsv) {
  for (const unsigned na : {0u, 5u}) {
    for (const bool sorted : {false, true}) {
      GroupbyParams p;
      p.rows = 3 * GroupbyCsvStream::kBlockRows + 1234;
      p.k = 10;
      p.na_percent = na;
      p.sorted = sorted;
      GroupbyGenerator gen(p);
      std::string sequential, block;
      for (bool more = true; more;) {
        block.clear();
        more = gen.next_block(block, 1 << 16);
        sequential += block;
      }
      for (const unsigned threads : {1u, 3u}) {
        GroupbyCsvStream stream(p, threads);
        std::string parallel;
        while (stream.next(block)) parallel += block;
        EXPECT_EQ(stream.rows_read(), p.rows);
        EXPECT_TRUE(parallel == sequential) << "na " << na << " sorted " << sorted << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace tally::bench::h2o
