#pragma once
// Rows of an answer as text cells, streamed from a PostgreSQL-protocol server
// (through a cursor in batches, so a 1e8-row answer is never held whole) or from
// DuckDB (one data chunk at a time), and their comparison: integers and text
// exactly, floating point within 1e-9 relative.
#include <libpq-fe.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/duckdb_library.hpp"

namespace tally::bench {

struct Cell {
  bool null = false;
  bool approx = false;  // a floating-point value: compared within a tolerance
  bool nan = false;     // DuckDB's NaN, read as NULL (see DuckRowSource)
  std::string text;
};
using Row = std::vector<Cell>;

// Equal as the benchmark needs: NULL only equals NULL; equal text is equal;
// otherwise, when either side is floating point, both parse and agree within
// 1e-9 relative. Values that cancel to nearly zero (corr() of nearly
// uncorrelated columns) differ between summation orders by rounding residue
// far below 1e-12 in absolute terms, which relative error would call a mismatch.
inline bool same_value(const Cell& a, const Cell& b) {
  if (a.null || b.null) return a.null && b.null;
  if (a.text == b.text) return true;
  if (!a.approx && !b.approx) return false;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double x = std::strtod(a.text.c_str(), &end_a);
  const double y = std::strtod(b.text.c_str(), &end_b);
  if (*end_a != '\0' || *end_b != '\0') return false;
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  const double diff = std::fabs(x - y);
  return diff <= 1e-9 * std::max(std::fabs(x), std::fabs(y)) || diff <= 1e-12;
}

// An error's primary message, without libpq's "ERROR:  " prefix.
inline std::string primary_message(const PGresult* r) {
  const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  return m ? m : PQresultErrorMessage(r);
}

inline std::string show(const Row& row) {
  std::string s = "(";
  for (size_t i = 0; i < row.size(); ++i) s += (i ? ", " : "") + (row[i].null ? std::string("NULL") : row[i].text);
  return s + ")";
}

class RowSource {
 public:
  virtual ~RowSource() = default;
  // The next row into `row`; false at the end or on an error (error() is then set).
  virtual bool next(Row& row) = 0;
  const std::string& error() const { return error_; }
  // The result's column types, as this source names them (for type checks).
  const std::vector<std::string>& types() const { return types_; }

 protected:
  std::string error_;
  std::vector<std::string> types_;
};

// A query's rows from a PostgreSQL-protocol server, read through a cursor
// in batches: one PGresult per batch, where libpq's single-row mode makes
// one per row (minutes for a 1e8-row answer). The cursor's transaction is
// the connection's until the source ends or is destroyed.
class PgRowSource : public RowSource {
 public:
  PgRowSource(PGconn* c, const std::string& sql) : c_(c) {
    done_ = !command("BEGIN") || !command("DECLARE answer_rows NO SCROLL CURSOR FOR " + sql);
    if (done_) finish();
  }
  ~PgRowSource() override {
    if (batch_ != nullptr) PQclear(batch_);
    finish();
  }
  bool next(Row& row) override {
    while (!done_ && (batch_ == nullptr || at_ >= PQntuples(batch_))) {
      if (batch_ != nullptr) PQclear(batch_);
      batch_ = PQexec(c_, "FETCH FORWARD 65536 FROM answer_rows");
      if (PQresultStatus(batch_) != PGRES_TUPLES_OK) {
        error_ = error_text(batch_);
        done_ = true;
      } else if (types_.empty()) {
        for (int i = 0; i < PQnfields(batch_); ++i) types_.push_back("oid " + std::to_string(PQftype(batch_, i)));
      }
      at_ = 0;
      done_ = done_ || PQntuples(batch_) == 0;
    }
    if (done_) {
      finish();
      return false;
    }
    const int n = PQnfields(batch_);
    row.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      Cell& cell = row[static_cast<size_t>(i)];
      cell.null = PQgetisnull(batch_, at_, i) != 0;
      const Oid type = PQftype(batch_, i);
      cell.approx = type == 700 || type == 701;  // float4, float8
      cell.text.assign(PQgetvalue(batch_, at_, i), static_cast<size_t>(PQgetlength(batch_, at_, i)));
    }
    ++at_;
    return true;
  }

 private:
  static std::string error_text(const PGresult* r) {
    const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return std::string(code ? code : "?????") + ": " + primary_message(r);
  }
  bool command(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) error_ = error_text(r);
    if (ok && sql == "BEGIN") in_transaction_ = true;
    PQclear(r);
    return ok;
  }
  // Ends the cursor's transaction (after an error, COMMIT rolls it back).
  void finish() {
    if (!in_transaction_) return;
    in_transaction_ = false;
    PQclear(PQexec(c_, "COMMIT"));
  }
  PGconn* c_;
  PGresult* batch_ = nullptr;
  int at_ = 0;
  bool done_ = false;
  bool in_transaction_ = false;
};

// Reads another source on a thread of its own, batches of rows ahead of the
// reader, so that two large answers are fetched, converted and compared on
// three threads at once. The source is also opened on that thread (DuckDB
// runs its query when the source is made).
class PrefetchedRowSource : public RowSource {
 public:
  explicit PrefetchedRowSource(std::function<std::unique_ptr<RowSource>()> open)
      : worker_([this, open = std::move(open)] { run(open); }) {}
  ~PrefetchedRowSource() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  bool next(Row& row) override {
    while (at_ >= current_.size()) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return !ready_.empty() || finished_; });
      if (types_.empty()) types_ = inner_types_;
      if (ready_.empty()) {
        error_ = inner_error_;
        return false;
      }
      current_ = std::move(ready_.front());
      ready_.pop_front();
      at_ = 0;
      lock.unlock();
      changed_.notify_all();
    }
    row.swap(current_[at_++]);
    return true;
  }

 private:
  static constexpr size_t kBatchRows = 4096;
  static constexpr size_t kBatchesAhead = 8;
  void run(const std::function<std::unique_ptr<RowSource>()>& open) {
    std::unique_ptr<RowSource> source = open();
    for (;;) {
      std::vector<Row> batch(kBatchRows);
      size_t n = 0;
      while (n < kBatchRows && source->next(batch[n])) ++n;
      batch.resize(n);
      std::unique_lock lock(mutex_);
      inner_types_ = source->types();
      if (n > 0) {
        changed_.wait(lock, [this] { return ready_.size() < kBatchesAhead || stop_; });
        if (stop_) break;
        ready_.push_back(std::move(batch));
      }
      if (n < kBatchRows) {
        inner_error_ = source->error();
        break;
      }
      lock.unlock();
      changed_.notify_all();
    }
    std::lock_guard lock(mutex_);
    finished_ = true;
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<Row>> ready_;
  std::vector<std::string> inner_types_;
  std::string inner_error_;
  bool finished_ = false;
  bool stop_ = false;
  std::vector<Row> current_;
  size_t at_ = 0;
  std::thread worker_;  // last: it starts once the rest is made
};

class DuckRowSource : public RowSource {
 public:
  DuckRowSource(const DuckdbLibrary& lib, duck::connection c, const std::string& sql) : lib_(lib) {
    if (lib_.query(c, sql.c_str(), &result_) != duck::kSuccess) {
      const char* e = lib_.result_error(&result_);
      error_ = std::string("DuckDB: ") + (e ? e : "query failed");
      failed_ = true;
      return;
    }
    columns_ = lib_.column_count(&result_);
    for (duck::idx_t i = 0; i < columns_; ++i) {
      column_types_.push_back(lib_.column_type(&result_, i));
      types_.push_back("duckdb type " + std::to_string(column_types_.back()));
      Decimal decimal;
      if (column_types_.back() == duck::kDecimal) {
        duck::logical_type t = lib_.column_logical_type(&result_, i);
        decimal = {lib_.decimal_internal_type(t), lib_.decimal_scale(t)};
        lib_.destroy_logical_type(&t);
      }
      decimals_.push_back(decimal);
    }
  }
  ~DuckRowSource() override {
    if (chunk_ != nullptr) lib_.destroy_chunk(&chunk_);
    lib_.destroy_result(&result_);
  }
  bool next(Row& row) override {
    if (failed_) return false;
    while (chunk_ == nullptr || at_ >= size_) {
      if (chunk_ != nullptr) lib_.destroy_chunk(&chunk_);
      chunk_ = lib_.fetch_chunk(result_);
      if (chunk_ == nullptr) return false;
      size_ = lib_.chunk_size(chunk_);
      at_ = 0;
    }
    row.resize(columns_);
    for (duck::idx_t i = 0; i < columns_; ++i) read_cell(i, row[i]);
    ++at_;
    return true;
  }

 private:
  void read_cell(duck::idx_t column, Cell& cell) {
    duck::vector v = lib_.chunk_vector(chunk_, column);
    const uint64_t* validity = lib_.vector_validity(v);
    cell.null = validity != nullptr && ((validity[at_ / 64] >> (at_ % 64)) & 1) == 0;
    cell.approx = cell.nan = false;
    cell.text.clear();
    if (cell.null) return;
    const void* data = lib_.vector_data(v);
    char buf[64];
    switch (column_types_[column]) {
      case duck::kBoolean: cell.text = static_cast<const bool*>(data)[at_] ? "t" : "f"; return;
      case duck::kTinyint: cell.text = std::to_string(static_cast<const int8_t*>(data)[at_]); return;
      case duck::kSmallint: cell.text = std::to_string(static_cast<const int16_t*>(data)[at_]); return;
      case duck::kInteger: cell.text = std::to_string(static_cast<const int32_t*>(data)[at_]); return;
      case duck::kBigint: cell.text = std::to_string(static_cast<const int64_t*>(data)[at_]); return;
      case duck::kUinteger: cell.text = std::to_string(static_cast<const uint32_t*>(data)[at_]); return;
      case duck::kUbigint: cell.text = std::to_string(static_cast<const uint64_t*>(data)[at_]); return;
      case duck::kHugeint: {
        const duck::hugeint h = static_cast<const duck::hugeint*>(data)[at_];
        const __int128 x = (static_cast<__int128>(h.upper) << 64) | h.lower;
        cell.text = int128_text(x);
        return;
      }
      case duck::kFloat:
      case duck::kDouble: {
        const double x = column_types_[column] == duck::kFloat ? static_cast<const float*>(data)[at_]
                                                               : static_cast<const double*>(data)[at_];
        // DuckDB's corr() answers NaN where a variance is zero; PostgreSQL's
        // answers NULL (q9 at small sizes). Read as NULL so that they compare.
        if (std::isnan(x)) {
          cell.null = cell.nan = true;
          return;
        }
        std::snprintf(buf, sizeof buf, "%.17g", x);
        cell.text = buf;
        cell.approx = true;
        return;
      }
      case duck::kVarchar: {
        const duck::string_t& s = static_cast<const duck::string_t*>(data)[at_];
        cell.text.assign(s.data(), s.length);
        return;
      }
      case duck::kDate: cell.text = date_text(static_cast<const int32_t*>(data)[at_]); return;
      case duck::kTimestamp: cell.text = timestamp_text(static_cast<const int64_t*>(data)[at_]); return;
      case duck::kDecimal: {
        // Compared as a number: DuckDB prints a decimal's own scale, PostgreSQL
        // a numeric's display scale (sum(decimal(15,2)) is 38,2 in one, any in the other).
        cell.text = decimal_text(decimal_value(decimals_[column].internal, data), decimals_[column].scale);
        cell.approx = true;
        return;
      }
      default:
        cell.text = "<duckdb type " + std::to_string(column_types_[column]) + " not read>";
    }
  }
  struct Decimal {
    duck::type internal = duck::kBigint;
    uint8_t scale = 0;
  };
  __int128 decimal_value(duck::type internal, const void* data) const {
    switch (internal) {
      case duck::kSmallint: return static_cast<const int16_t*>(data)[at_];
      case duck::kInteger: return static_cast<const int32_t*>(data)[at_];
      case duck::kBigint: return static_cast<const int64_t*>(data)[at_];
      default: {
        const duck::hugeint h = static_cast<const duck::hugeint*>(data)[at_];
        return (static_cast<__int128>(h.upper) << 64) | h.lower;
      }
    }
  }
  static std::string decimal_text(__int128 x, uint8_t scale) {
    std::string digits = int128_text(x < 0 ? -x : x);
    if (scale > 0) {
      if (digits.size() <= scale) digits.insert(0, scale + 1 - digits.size(), '0');
      digits.insert(digits.size() - scale, ".");
    }
    return (x < 0 ? "-" : "") + digits;
  }
  // Days since 1970-01-01 as YYYY-MM-DD (proleptic Gregorian, as both systems print dates).
  // Microseconds since 1970 as PostgreSQL prints a timestamp: fraction digits only where nonzero.
  static std::string timestamp_text(int64_t micros) {
    const int64_t day_micros = int64_t{86400} * 1000000;
    int64_t days = micros / day_micros, rest = micros % day_micros;
    if (rest < 0) rest += day_micros, --days;
    const int64_t seconds = rest / 1000000, fraction = rest % 1000000;
    char buf[48];
    std::snprintf(buf, sizeof buf, " %02lld:%02lld:%02lld", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
    std::string text = date_text(static_cast<int32_t>(days)) + buf;
    if (fraction != 0) {
      std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(fraction));
      std::string digits = buf;
      while (digits.back() == '0') digits.pop_back();
      text += digits;
    }
    return text;
  }
  static std::string date_text(int32_t days) {
    const int64_t z = static_cast<int64_t>(days) + 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    const int64_t d = doy - (153 * mp + 2) / 5 + 1;
    const int64_t m = mp < 10 ? mp + 3 : mp - 9;
    const int64_t y = yoe + era * 400 + (m <= 2);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld", static_cast<long long>(y), static_cast<long long>(m),
                  static_cast<long long>(d));
    return buf;
  }
  static std::string int128_text(__int128 x) {
    if (x == 0) return "0";
    const bool negative = x < 0;
    unsigned __int128 u = negative ? -static_cast<unsigned __int128>(x) : static_cast<unsigned __int128>(x);
    std::string digits;
    while (u != 0) {
      digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
      u /= 10;
    }
    if (negative) digits.push_back('-');
    return {digits.rbegin(), digits.rend()};
  }

  const DuckdbLibrary& lib_;
  duck::result result_{};
  bool failed_ = false;
  duck::idx_t columns_ = 0;
  std::vector<duck::type> column_types_;
  std::vector<Decimal> decimals_;
  duck::data_chunk chunk_ = nullptr;
  duck::idx_t size_ = 0;
  duck::idx_t at_ = 0;
};

struct Comparison {
  bool equal = false;
  uint64_t rows = 0;       // rows compared (the shorter side's count when they differ)
  std::string difference;  // the first difference, or the error that stopped a side
};

// Walks both ordered answers together; stops at the first difference.
inline Comparison compare_rows(RowSource& a, RowSource& b, const char* a_name, const char* b_name,
                               bool compare_types) {
  Comparison out;
  Row x, y;
  for (;;) {
    const bool has_a = a.next(x);
    const bool has_b = b.next(y);
    if (!a.error().empty() || !b.error().empty()) {
      out.difference = "error reading answers: " + a.error() + (b.error().empty() ? "" : " / " + b.error());
      return out;
    }
    if (out.rows == 0 && compare_types && (has_a || has_b) && a.types() != b.types()) {
      std::string ta, tb;
      for (const auto& t : a.types()) ta += t + " ";
      for (const auto& t : b.types()) tb += t + " ";
      out.difference = std::string("column types differ: ") + a_name + " " + ta + "/ " + b_name + " " + tb;
      return out;
    }
    if (!has_a || !has_b) {
      if (has_a != has_b) {
        out.difference = std::string(has_a ? b_name : a_name) + " has fewer rows (" + std::to_string(out.rows) + ")";
        return out;
      }
      out.equal = true;
      return out;
    }
    bool same = x.size() == y.size();
    for (size_t i = 0; same && i < x.size(); ++i) same = same_value(x[i], y[i]);
    if (!same) {
      out.difference = "row " + std::to_string(out.rows + 1) + ": " + a_name + " " + show(x) + " vs " + b_name + " " +
                       show(y);
      return out;
    }
    ++out.rows;
  }
}

}  // namespace tally::bench
