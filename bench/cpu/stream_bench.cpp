// Result streaming benchmark: encoding DataRow messages for a result of N rows
// (int4 key, int8 sum, numeric avg: the shape of `SELECT g, sum(v), avg(v)
// ... GROUP BY g`), text and binary, through stream_rows into a writer that
// offers its buffer (what the wire writer does) and, as the baseline in the
// same run, into a writer that takes one data_row() call per row (the
// per-row path). Output bytes are checked against value_codec's per-field
// encoding for every 97th row. No sockets: this is the encoder alone.
// --shape five: the 8M five-aggregate result instead (int4 key, count, sum,
// min, max, and an avg left as its int64 sums and counts, AvgParts: what
// `SELECT g, count(*), sum(v), min(v), max(v), avg(v) ... GROUP BY g` streams).
//
// Usage: cpu_stream_bench [--rows N] [--runs R] [--shape three|five]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "executor/result_set.hpp"
#include "executor/value_codec.hpp"
#include "protocol/discarding_result_writer.hpp"

using namespace tally;
using namespace tally::executor;

namespace {

// Discards what it is given, keeping a byte count and every 97th row's fields.
class SinkWriter final : public protocol::DiscardingResultWriter {
 public:
  explicit SinkWriter(bool buffered) : buffered_(buffered) {}
  size_t bytes = 0, rows = 0;
  std::vector<std::pair<size_t, std::vector<std::optional<std::string>>>> sampled;

  std::string* data_row_buffer() override { return buffered_ ? &buffer_ : nullptr; }
  void data_rows_appended() override {
    walk(buffer_);
    buffer_.clear();
  }
  // Blocks encoded in the encoder's own buffers are read from there (the
  // wire writer sends them without a copy).
  void data_rows_encoded(std::string_view messages) override { walk(messages); }
  void data_row(std::span<const std::optional<std::string_view>> fields) override {
    size_t n = 7;
    for (const auto& f : fields) n += 4 + (f ? f->size() : 0);
    bytes += n;
    if (rows % 97 == 0) {
      std::vector<std::optional<std::string>> row;
      for (const auto& f : fields) row.emplace_back(f ? std::optional<std::string>(std::string(*f)) : std::nullopt);
      sampled.emplace_back(rows, std::move(row));
    }
    ++rows;
  }

 private:
  // Walk the messages (as a socket write would read them) and drop them.
  void walk(std::string_view messages) {
    size_t at = 0;
    while (at < messages.size()) {
      uint32_t length;
      std::memcpy(&length, messages.data() + at + 1, 4);
      length = __builtin_bswap32(length);
      if (rows % 97 == 0) sampled.emplace_back(rows, decode(messages.data() + at + 5));
      ++rows;
      at += 1 + length;
    }
    bytes += messages.size();
  }
  static std::vector<std::optional<std::string>> decode(const char* p) {
    const int fields = (static_cast<uint8_t>(p[0]) << 8) | static_cast<uint8_t>(p[1]);
    p += 2;
    std::vector<std::optional<std::string>> row;
    for (int f = 0; f < fields; ++f) {
      uint32_t len;
      std::memcpy(&len, p, 4);
      len = __builtin_bswap32(len);
      p += 4;
      if (len == UINT32_MAX) { row.emplace_back(std::nullopt); continue; }
      row.emplace_back(std::string(p, len));
      p += len;
    }
    return row;
  }
  bool buffered_;
  std::string buffer_;
};

// CPU seconds of the whole process (the session thread and the encoding
// helpers): on a shared host a steadier figure than the wall time.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  size_t rows = 8'388'608;
  int runs = 3;
  std::string shape = "three";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rows") rows = std::stoull(argv[i + 1]);
    else if (flag == "--runs") runs = std::stoi(argv[i + 1]);
    else if (flag == "--shape") shape = argv[i + 1];
  }
  ResultSet result;
  if (shape == "five") {
    // Groups of 1-3 rows of values in [-500, 500), as cpu_bench's 8M groups
    // over 10M rows; every 1000th group's avg is NULL-free, min <= max.
    Vector g(SqlType{TypeId::int4}), count(SqlType{TypeId::int8}), sum(SqlType{TypeId::int8}),
        min(SqlType{TypeId::int4}), max(SqlType{TypeId::int4}), avg(SqlType{TypeId::numeric});
    for (Vector* v : {&g, &count, &sum, &min, &max}) v->resize(rows);
    auto parts = std::make_shared<AvgParts>();
    parts->sum.resize(rows);
    parts->count.resize(rows);
    for (size_t r = 0; r < rows; ++r) {
      const auto n = static_cast<int64_t>(r % 7 == 0 ? 2 : (r % 31 == 0 ? 3 : 1));
      const auto lo = static_cast<int64_t>((r * 7919) % 1000) - 500;
      g.ints[r] = static_cast<int64_t>(r);
      count.ints[r] = n;
      min.ints[r] = lo;
      max.ints[r] = lo + (n - 1) * 3;
      sum.ints[r] = n * lo + (n - 1) * n / 2 * 3;
      parts->sum[r] = sum.ints[r];
      parts->count[r] = n;
    }
    avg.count = rows;
    avg.avg_parts = std::move(parts);
    result.columns = {std::move(g), std::move(count), std::move(sum), std::move(min), std::move(max), std::move(avg)};
  } else {
    Vector g(SqlType{TypeId::int4}), sum(SqlType{TypeId::int8}), avg(SqlType{TypeId::numeric});
    g.resize(rows);
    sum.resize(rows);
    avg.resize(rows);
    for (size_t r = 0; r < rows; ++r) {
      g.ints[r] = static_cast<int64_t>(r);
      sum.ints[r] = static_cast<int64_t>((r * 7919) % 1000000) - 500000;
      avg.numerics[r] = numeric_div(Numeric{sum.ints[r], 0}, Numeric::from_int(static_cast<int64_t>(r % 5 + 1)));
    }
    result.columns = {std::move(g), std::move(sum), std::move(avg)};
  }
  const size_t ncols = result.columns.size();
  result.rows = rows;
  std::printf("%zu rows of %s\n", rows,
              shape == "five" ? "(int4, int8 count, int8 sum, int4 min, int4 max, numeric avg from sums and counts)"
                              : "(int4, int8, numeric)");
  std::printf("%-7s %-9s %10s %10s %12s %10s %8s %s\n", "format", "path", "seconds", "cpu_s", "Mrows/s", "MB/s", "ratio",
              "check");
  bool all_ok = true;
  for (auto format : {tally::Format::text, tally::Format::binary}) {
    const std::vector<tally::Format> formats(ncols, format);
    double baseline = 0;
    for (bool buffered : {false, true}) {
      double best = 1e30, best_cpu = 1e30;
      size_t bytes = 0;
      bool ok = true;
      for (int run = 0; run < runs; ++run) {
        SinkWriter writer(buffered);
        size_t position = 0;
        const auto start = std::chrono::steady_clock::now();
        const double cpu_start = process_cpu_seconds();
        stream_rows(result, formats, position, 0, writer);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        best_cpu = std::min(best_cpu, process_cpu_seconds() - cpu_start);
        bytes = writer.bytes;
        ok &= writer.rows == rows;
        for (const auto& [row, fields] : writer.sampled) {
          for (size_t c = 0; c < ncols; ++c) {
            std::string expected;
            if (format == tally::Format::binary) append_binary(expected, result.columns[c], row);
            else append_text(expected, result.columns[c], row);
            ok &= fields[c].has_value() && *fields[c] == expected;
          }
        }
      }
      if (!buffered) baseline = best;
      all_ok &= ok;
      std::printf("%-7s %-9s %10.3f %10.3f %12.2f %10.1f %7.2fx %s\n",
                  format == tally::Format::text ? "text" : "binary", buffered ? "buffer" : "data_row", best, best_cpu,
                  static_cast<double>(rows) / best / 1e6,
                  static_cast<double>(bytes) / best / 1e6, baseline / best, ok ? "ok" : "MISMATCH");
    }
  }
  std::printf("\n%s\n", all_ok ? "all sampled rows match value_codec" : "SOME ROWS DIFFER");
  return all_ok ? 0 : 1;
}
