#pragma once
// The db-benchmark groupby table (h2oai/db-benchmark, _data/groupby-datagen.R),
// generated as CSV text in blocks so that it streams into COPY or a file without
// being held in memory. Same definition as the R script: N rows; id1, id2 sampled
// from sprintf("id%03d", 1:K); id3 from sprintf("id%010d", 1:(N/K)); id4, id5
// from 1..K; id6 from 1..N/K; v1, v2 from 1..5; v3 = round(runif(0, 100), 4);
// with NA percentage p, exactly floor(N * p / 100) rows of EACH column are NULL
// (chosen without replacement, per column); with sort, rows are ordered by
// id1..id6 with NULLs first (data.table's setkeyv). The random stream is our own
// (xoshiro256** from a fixed seed), so the values are not R's, but they are the
// same on every run and machine, which is what a comparison between systems needs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace tally::bench::h2o {

struct GroupbyParams {
  uint64_t rows = 10'000'000;
  uint64_t k = 100;
  unsigned na_percent = 0;
  bool sorted = false;
  uint64_t seed = 108;  // the R script's set.seed(108)
};

// db-benchmark's file name for the data set, e.g. G1_1e7_1e2_0_0.
inline std::string pretty_sci(uint64_t x) {
  const std::string s = std::to_string(x);
  const size_t zeros = s.size() - 1 - s.find_last_not_of('0');
  if (zeros == s.size() - 1) return s.substr(0, 1) + "e" + std::to_string(zeros);
  return s;
}
inline std::string data_name(const GroupbyParams& p) {
  return "G1_" + pretty_sci(p.rows) + "_" + pretty_sci(p.k) + "_" + std::to_string(p.na_percent) + "_" +
         std::to_string(p.sorted ? 1 : 0);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (auto& word : s_) {  // splitmix64 expands the seed, as the authors recommend
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, m) by Lemire's multiply-shift (bias below 2^-40 for our m).
  uint64_t below(uint64_t m) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * m) >> 64); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

class GroupbyGenerator {
 public:
  static constexpr int kColumns = 9;
  static constexpr const char* kHeader = "id1,id2,id3,id4,id5,id6,v1,v2,v3\n";

  explicit GroupbyGenerator(const GroupbyParams& p)
      : p_(p), groups_small_(std::max<uint64_t>(1, p.rows / std::max<uint64_t>(1, p.k))), rng_(p.seed) {
    const uint64_t nulls = p.rows * p.na_percent / 100;
    for (auto& n : nulls_left_) n = nulls;
    if (p.sorted) materialize_sorted();
  }

  // One row; 0 means NULL for the ids and v1, v2 (their values start at 1),
  // v3_ticks < 0 means NULL (v3 = v3_ticks / 10^4).
  struct Row {
    uint32_t id1, id2;
    uint64_t id3;
    uint32_t id4, id5;
    uint64_t id6;
    uint8_t v1, v2;
    int32_t v3_ticks;
  };

  uint64_t rows() const { return p_.rows; }
  uint64_t rows_done() const { return next_row_; }

  // Appends the next rows as CSV (the header first) until `out` holds about
  // `bytes` bytes; returns false once every row was written.
  bool next_block(std::string& out, size_t bytes) {
    if (!header_done_) {
      out += kHeader;
      header_done_ = true;
    }
    char line[160];
    while (next_row_ < p_.rows && out.size() < bytes) {
      out.append(line, static_cast<size_t>(format(next_row(), line) - line));
    }
    return next_row_ < p_.rows;
  }

  // The next `n` rows (fewer at the end) into `rows`, without formatting
  // them: the random stream is sequential, the text is not, so a parallel
  // writer draws here in order and formats on other threads
  // (groupby_stream.hpp). The header is the caller's.
  void draw_rows(std::vector<Row>& rows, uint64_t n) {
    rows.clear();
    while (next_row_ < p_.rows && rows.size() < n) rows.push_back(next_row());
  }

  // Appends the rows as CSV lines, exactly as next_block writes them.
  static void append_csv(const std::vector<Row>& rows, std::string& out) {
    const size_t start = out.size();
    out.resize(start + rows.size() * kMaxLineBytes);
    char* end = out.data() + start;
    for (const Row& r : rows) end = format(r, end);
    out.resize(static_cast<size_t>(end - out.data()));
  }

 private:
  // More than the longest line format() writes: with counts up to 1e12
  // (options.hpp) three ids of at most 14 bytes, three integers of at most 13
  // digits, v1 and v2 of one, v3 of at most 8, nine separators: 98.
  static constexpr size_t kMaxLineBytes = 160;

  Row next_row() {
    const Row r = p_.sorted ? sorted_[order_[next_row_]] : draw();
    ++next_row_;
    return r;
  }

  // Selection sampling (Knuth's algorithm S): row t of N is NULL with
  // probability (NULLs still to place) / (rows still to come), which places
  // exactly the requested number, uniformly, in one pass.
  bool null_here(int column) {
    if (nulls_left_[column] == 0) return false;
    const uint64_t remaining = p_.rows - drawn_;
    if (rng_.below(remaining) < nulls_left_[column]) {
      --nulls_left_[column];
      return true;
    }
    return false;
  }

  Row draw() {
    Row r{};
    r.id1 = static_cast<uint32_t>(1 + rng_.below(p_.k));
    r.id2 = static_cast<uint32_t>(1 + rng_.below(p_.k));
    r.id3 = 1 + rng_.below(groups_small_);
    r.id4 = static_cast<uint32_t>(1 + rng_.below(p_.k));
    r.id5 = static_cast<uint32_t>(1 + rng_.below(p_.k));
    r.id6 = 1 + rng_.below(groups_small_);
    r.v1 = static_cast<uint8_t>(1 + rng_.below(5));
    r.v2 = static_cast<uint8_t>(1 + rng_.below(5));
    // round(runif(N, max = 100), 4): 100 * u to the nearest 10^-4 (100.0000 possible, as in R).
    r.v3_ticks = static_cast<int32_t>(std::nearbyint(rng_.unit() * 1e6));
    if (p_.na_percent > 0) {
      if (null_here(0)) r.id1 = 0;
      if (null_here(1)) r.id2 = 0;
      if (null_here(2)) r.id3 = 0;
      if (null_here(3)) r.id4 = 0;
      if (null_here(4)) r.id5 = 0;
      if (null_here(5)) r.id6 = 0;
      if (null_here(6)) r.v1 = 0;
      if (null_here(7)) r.v2 = 0;
      if (null_here(8)) r.v3_ticks = -1;
    }
    ++drawn_;
    return r;
  }

  // setkeyv(DT, id1..id6): the text keys in string order (sprintf("id%03d")
  // over K > 999 is not numeric order), NULL first.
  void materialize_sorted() {
    sorted_.reserve(p_.rows);
    for (uint64_t i = 0; i < p_.rows; ++i) sorted_.push_back(draw());
    std::vector<uint32_t> by_text(p_.k);
    std::iota(by_text.begin(), by_text.end(), 1u);
    std::sort(by_text.begin(), by_text.end(), [](uint32_t a, uint32_t b) {
      char x[24], y[24];
      std::snprintf(x, sizeof x, "%03u", a);
      std::snprintf(y, sizeof y, "%03u", b);
      return std::strcmp(x, y) < 0;
    });
    std::vector<uint32_t> rank(p_.k + 1, 0);  // rank[0] = 0: NULL sorts first
    for (uint32_t i = 0; i < p_.k; ++i) rank[by_text[i]] = i + 1;
    order_.resize(p_.rows);
    std::iota(order_.begin(), order_.end(), uint64_t{0});
    std::sort(order_.begin(), order_.end(), [&](uint64_t a, uint64_t b) {
      const Row& x = sorted_[a];
      const Row& y = sorted_[b];
      if (x.id1 != y.id1) return rank[x.id1] < rank[y.id1];
      if (x.id2 != y.id2) return rank[x.id2] < rank[y.id2];
      if (x.id3 != y.id3) return x.id3 < y.id3;  // %010d: numeric order is string order
      if (x.id4 != y.id4) return x.id4 < y.id4;
      if (x.id5 != y.id5) return x.id5 < y.id5;
      if (x.id6 != y.id6) return x.id6 < y.id6;
      return a < b;
    });
  }

  static char* put_uint(char* out, uint64_t v, int width) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    for (int i = n; i < width; ++i) *out++ = '0';
    while (n > 0) *out++ = digits[--n];
    return out;
  }
  static char* put_id(char* out, uint64_t v, int width) {
    if (v == 0) return out;  // NULL: an empty unquoted CSV field
    *out++ = 'i';
    *out++ = 'd';
    return put_uint(out, v, width);
  }
  static char* put_int(char* out, uint64_t v) { return v == 0 ? out : put_uint(out, v, 0); }
  // fwrite's shortest form: 23.5749, 23.5, 23.
  static char* put_v3(char* out, int32_t ticks) {
    if (ticks < 0) return out;
    out = put_uint(out, static_cast<uint64_t>(ticks / 10000), 0);
    int frac = ticks % 10000;
    if (frac == 0) return out;
    int width = 4;
    while (frac % 10 == 0) {
      frac /= 10;
      --width;
    }
    *out++ = '.';
    return put_uint(out, static_cast<uint64_t>(frac), width);
  }
  static char* format(const Row& r, char* out) {
    out = put_id(out, r.id1, 3);
    *out++ = ',';
    out = put_id(out, r.id2, 3);
    *out++ = ',';
    out = put_id(out, r.id3, 10);
    *out++ = ',';
    out = put_int(out, r.id4);
    *out++ = ',';
    out = put_int(out, r.id5);
    *out++ = ',';
    out = put_int(out, r.id6);
    *out++ = ',';
    out = put_int(out, r.v1);
    *out++ = ',';
    out = put_int(out, r.v2);
    *out++ = ',';
    out = put_v3(out, r.v3_ticks);
    *out++ = '\n';
    return out;
  }

  GroupbyParams p_;
  uint64_t groups_small_;
  Xoshiro256 rng_;
  uint64_t nulls_left_[kColumns] = {};
  uint64_t drawn_ = 0;
  uint64_t next_row_ = 0;
  bool header_done_ = false;
  std::vector<Row> sorted_;
  std::vector<uint64_t> order_;
};

}  // namespace tally::bench::h2o
