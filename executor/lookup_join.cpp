#include "executor/lookup_join.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>

#include "common/column_width.hpp"
#include "common/for_parts.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/operators/hash_join_build.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

bool integer_key(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8 || id == TypeId::date;
}

double milliseconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The smallest and largest non-NULL key, how many there are, and whether
// they ascend (each above every one before it).
struct KeyRange {
  int64_t min = INT64_MAX, max = INT64_MIN;
  size_t keyed = 0;
  bool ascending = true;
};

KeyRange key_range(const Vector& key, size_t begin, size_t end) {
  KeyRange r;
  for (size_t i = begin; i < end; ++i) {
    if (key.null_at(i)) continue;  // a NULL key joins nothing
    const int64_t k = key.ints[i];
    r.ascending = r.ascending && (r.keyed == 0 || k > r.max);
    r.min = std::min(r.min, k);
    r.max = std::max(r.max, k);
    ++r.keyed;
  }
  return r;
}

// key_range over all rows, in parts on `threads` threads where they are many.
KeyRange key_range(const Vector& key, int threads) {
  constexpr size_t kRowsPerPart = size_t{1} << 20;
  const size_t parts = std::clamp<size_t>(key.count / kRowsPerPart, 1, static_cast<size_t>(std::max(threads, 1)));
  std::vector<KeyRange> ranges(parts);
  for_parts(parts, key.count, [&](size_t part, size_t begin, size_t end) { ranges[part] = key_range(key, begin, end); });
  KeyRange all;
  for (const KeyRange& r : ranges) {
    if (r.keyed == 0) continue;
    all.ascending = all.ascending && r.ascending && (all.keyed == 0 || r.min > all.max);
    all.min = std::min(all.min, r.min);
    all.max = std::max(all.max, r.max);
    all.keyed += r.keyed;
  }
  return all;
}

// Whether the keys are distinct (NULLs aside): a bit per key of the span,
// set on every thread at once (an eighth of a byte a key: 7.5 MB for the 60M
// order keys of TPC-H SF 10); a bit found set already is a repeat.
bool distinct_keys(const Vector& keys, int64_t base, uint64_t span, int threads) {
  std::vector<std::atomic<uint64_t>> bits(span / 64 + 1);
  std::atomic<bool> repeated{false};
  const int64_t* k = keys.int_data();
  cpu::parallel_for(threads, keys.count, [&](int, size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      if (keys.null_at(r)) continue;
      const auto o = static_cast<uint64_t>(k[r] - base);
      const uint64_t bit = uint64_t{1} << (o & 63);
      if ((bits[o >> 6].fetch_or(bit, std::memory_order_relaxed) & bit) != 0) {
        repeated.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  return !repeated.load();
}

// The build rows by key in a hash table of twice as many slots as keys:
// false where a key repeats. The keys' first slots are hashed a batch at a
// time and fetched ahead of their inserts: the table (16 bytes a slot, 16 MB
// for TPC-H Q9's 435K partsupp keys at SF 10) is far larger than the
// caches, and one insert after another waited on each slot's miss.
bool hash_keys(LookupTable& table, size_t keyed) {
  const uint64_t size = std::bit_ceil(std::max<uint64_t>(2, 2 * static_cast<uint64_t>(keyed)));
  table.memory.grow(size * sizeof(LookupSlot));
  table.slots.assign(size, LookupSlot{0, -1});
  const Vector& key = table.keys;
  const int64_t* keys = key.int_data();
  constexpr size_t kAhead = 16;
  constexpr size_t kBatch = 1024;
  uint64_t first[kBatch];
  for (size_t begin = 0; begin < key.count; begin += kBatch) {
    const size_t end = std::min(key.count, begin + kBatch);
    for (size_t r = begin; r < end; ++r) first[r - begin] = hash_lookup_key(keys[r], size);
    for (size_t r = begin; r < end; ++r) {
      if (r + kAhead < end) __builtin_prefetch(&table.slots[first[r + kAhead - begin]], 1);
      if (key.null_at(r)) continue;
      const int64_t k = keys[r];
      uint64_t at = first[r - begin];
      for (; table.slots[at].row >= 0; at = (at + 1) & (size - 1)) {
        if (table.slots[at].key == k) return false;
      }
      table.slots[at] = LookupSlot{k, static_cast<int64_t>(r)};
    }
  }
  return true;
}

// The build side's rows reduced to the key and the lookup columns as they
// come: the expressions are evaluated in prepare(), on the threads of the
// source's read-ahead, several chunks at once, and only their values are
// kept (not the build side's other columns).
class LookupSink final : public PreparingSink {
 public:
  LookupSink(const LookupSource& source, size_t space_width, const std::vector<Value>* parameters)
      : source_(source), space_width_(space_width), parameters_(parameters) {
    columns_.push_back(OutputColumn{"key", source.build_key->type});
    for (const auto& c : source.columns) columns_.push_back(OutputColumn{"value", c->type});
  }
  // The key, then the lookup columns; a build-side column as it is (orders'
  // o_orderkey, 15M rows at SF 10) is taken from the chunk, dropped after.
  void prepare(DataChunk& chunk) const override {
    const std::vector<int>& layout = source_.build->layout();
    const EvalInput input = space_input(chunk, layout, space_width_, parameters_);
    std::vector<const Expr*> exprs{source_.build_key.get()};
    for (const auto& c : source_.columns) exprs.push_back(c.get());
    chunk.columns = evaluate_taking(exprs, input, columns_by_space(chunk, layout, space_width_));
  }
  bool consume_prepared(DataChunk& chunk) override {
    memory.grow(chunk_bytes(chunk));
    chunk.prepared.reset();
    chunks_.push_back(std::move(chunk));
    return true;
  }
  DataChunk take(int threads) { return concat_chunks(std::move(chunks_), columns_, threads); }
  MemoryReservation memory;

 private:
  const LookupSource& source_;
  size_t space_width_;
  const std::vector<Value>* parameters_;
  std::vector<OutputColumn> columns_;
  std::vector<DataChunk> chunks_;
};

}  // namespace

bool build_lookup(const LookupSource& source, size_t space_width, uint64_t max_span, uint64_t max_unique_span,
                  ExecContext& context, LookupTable& table) {
  table = LookupTable{};
  if (!integer_key(source.build_key->type.id)) return false;
  const auto started = std::chrono::steady_clock::now();
  LookupSink sink(source, space_width, context.parameters);
  run_operator(*source.build, context, sink);
  DataChunk rows = sink.take(worker_threads(context));
  table.memory = std::move(sink.memory);
  const auto rows_made = std::chrono::steady_clock::now();
  if (rows.rows > static_cast<size_t>(INT32_MAX)) return false;
  table.keys = std::move(rows.columns[0]);
  const KeyRange range = key_range(table.keys, worker_threads(context));
  const size_t keyed = range.keyed;
  const int64_t max = range.max;
  const bool ascending = range.ascending;
  table.span = keyed == 0 ? 0 : static_cast<uint64_t>(max) - static_cast<uint64_t>(range.min) + 1;
  table.base = keyed == 0 ? 0 : range.min;
  // Keys that ascend are unique; others are checked with a bit per key
  // where their range is too wide for arrays on the host (orders probed in
  // customer's order). Unique keys need no arrays on the host but where it evaluates
  // a lookup (a GPU run scatters its own from the keys); the arrays of
  // other keys are made now, which shows a repeated key.
  if (table.span > max_unique_span) {
    if (!hash_keys(table, keyed)) return false;
  } else {
    bool unique = ascending;
    if (!unique && table.span > max_span) {
      if (!distinct_keys(table.keys, table.base, table.span, worker_threads(context))) return false;
      unique = true;
    }
    if (!unique && !table.host_arrays()) return false;
  }
  table.values.assign(std::make_move_iterator(rows.columns.begin() + 1), std::make_move_iterator(rows.columns.end()));
  table.value_columns.resize(table.values.size());
  table.program_ints.resize(table.values.size());
  table.program_valid.resize(table.values.size());
  const auto now = std::chrono::steady_clock::now();
  char made[96];
  std::snprintf(made, sizeof made, "made in %.3f ms (rows %.3f, keys %.3f)", milliseconds(now - started),
                milliseconds(rows_made - started), milliseconds(now - rows_made));
  table.description = source.name + ": " + std::to_string(keyed) + " rows by key " + std::to_string(table.base) +
                      ".." + std::to_string(keyed == 0 ? table.base : max) +
                      (table.slots.empty() ? ", " : " in a hash table, ") + made;
  return true;
}

bool LookupTable::host_arrays() {
  if (!slots.empty()) return true;  // hashed: no arrays by key
  std::call_once(*arrays_made, [this] {
    const auto started = std::chrono::steady_clock::now();
    const LookupColumn from_keys = lookup_rows_column(*this);  // before the arrays exist: the keys
    memory.grow(span * (sizeof(int32_t) + 1));
    row_of.resize(span);
    present.resize(span);
    unique_keys = scatter_lookup_keys(from_keys, row_of.data(), present.data());
    host_arrays_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  });
  return unique_keys;
}

Vector LookupExpr::evaluate(const EvalInput& input) const {
  const Vector k = key->evaluate(input);
  LookupTable& t = set->table(table);
  t.host_arrays();
  const size_t n = input.rows;
  std::vector<uint32_t> rows(n, kNullRow);
  const int64_t* keys = k.int_data();
  const std::optional<ProgramColumn> hashed =
      t.slots.empty() ? std::nullopt : std::optional<ProgramColumn>(lookup_rows_column(t).column);
  for (size_t r = 0; r < n; ++r) {
    if (k.null_at(r)) continue;
    if (hashed) {
      const ProgramSlot row = program_detail::lookup_value(*hashed, ProgramSlot{keys[r], 0, false});
      if (!row.null) rows[r] = static_cast<uint32_t>(row.i);
      continue;
    }
    const uint64_t at = static_cast<uint64_t>(keys[r]) - static_cast<uint64_t>(t.base);
    if (at < t.span && t.present[at]) rows[r] = static_cast<uint32_t>(t.row_of[at]);
  }
  if (column < 0) {
    Vector out(type);
    out.resize(n);
    for (size_t r = 0; r < n; ++r) {
      if (rows[r] == kNullRow) out.set_null(r);
      else out.ints[r] = rows[r];
    }
    return out;
  }
  return gather(t.values[static_cast<size_t>(column)], rows);
}

namespace {

// Threads for a pass over a lookup column's rows: every core from a million
// rows (TPC-H Q10's 1.5M customers at SF 10), else this one.
int column_threads(size_t rows) {
  return rows >= (size_t{1} << 20) ? cpu::WorkerPool::shared().workers() + 1 : 1;
}

// Value column c's validity (1 = not NULL), kept in the table for programs;
// null where no value is NULL (nothing to make, or copy to the device).
const uint8_t* program_validity(LookupTable& table, size_t c) {
  const Vector& v = table.values[c];
  if (v.nulls.empty()) return nullptr;
  std::vector<uint8_t>& valid = table.program_valid[c];
  valid.resize(v.count);
  cpu::parallel_for(column_threads(v.count), v.count, [&](int, size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) valid[r] = v.null_at(r) ? 0 : 1;
  });
  return valid.data();
}

}  // namespace

LookupColumn lookup_rows_column(LookupTable& table) {
  LookupColumn c;
  if (!table.slots.empty()) {
    c.column.data = table.slots.data();
    c.column.width = static_cast<uint8_t>(ColumnWidth::int64);
    c.column.size = table.slots.size();
    c.column.hashed = true;
    return c;
  }
  c.column = ProgramColumn{table.row_of.empty() ? nullptr : table.row_of.data(),
                           table.present.empty() ? nullptr : table.present.data(),
                           static_cast<uint8_t>(ColumnWidth::int32), table.base, table.span};
  if (c.column.data == nullptr) {
    c.keys = table.keys.int_data();
    c.key_nulls = table.keys.nulls.empty() ? nullptr : table.keys.nulls.data();
    c.key_count = table.keys.count;
  }
  return c;
}

std::optional<ProgramColumn> lookup_text_codes_column(LookupTable& table, int column,
                                                      std::shared_ptr<const storage::StringDictionary>& dictionary) {
  if (column < 0 || static_cast<size_t>(column) >= table.values.size()) return std::nullopt;
  const auto c = static_cast<size_t>(column);
  const Vector& v = table.values[c];
  if (physical_of(v.type.id) != Physical::text || (!v.coded() && v.count > 0)) return std::nullopt;
  dictionary = v.dictionary;
  if (!table.value_columns[c]) {
    table.value_columns[c] = ProgramColumn{v.codes.data(), program_validity(table, c),
                                           static_cast<uint8_t>(ColumnWidth::int32), 0, v.count};
  }
  return table.value_columns[c];
}

std::optional<ProgramColumn> lookup_value_column(LookupTable& table, int column, int32_t scale) {
  if (column < 0 || static_cast<size_t>(column) >= table.values.size()) return std::nullopt;
  const auto c = static_cast<size_t>(column);
  if (table.value_columns[c]) return table.value_columns[c];
  const Vector& v = table.values[c];
  const size_t n = v.count;
  ProgramColumn out{nullptr, program_validity(table, c), 0, 0, n};
  switch (physical_of(v.type.id)) {
    case Physical::boolean:
    case Physical::integer:
      if (v.avg_parts) return std::nullopt;
      out.data = v.int_data();
      out.width = static_cast<uint8_t>(ColumnWidth::int64);
      break;
    case Physical::floating:
      out.data = v.floats.data();
      out.width = static_cast<uint8_t>(ColumnWidth::float64);
      break;
    case Physical::numeric: {
      if (v.avg_parts) return std::nullopt;
      // Scaled integers at the scale the compiler typed the value with:
      // every value must hold it, within 18 digits.
      std::vector<int64_t>& ints = table.program_ints[c];
      ints.resize(n);
      constexpr __int128 kLimit = static_cast<__int128>(1000000000000000000LL);
      std::atomic<bool> held{true};
      cpu::parallel_for(column_threads(n), n, [&](int, size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
          if (v.null_at(r)) {
            ints[r] = 0;
            continue;
          }
          const Numeric& x = v.numerics[r];
          if (x.scale != scale || x.mantissa >= kLimit || x.mantissa <= -kLimit) {
            held.store(false, std::memory_order_relaxed);
            return;
          }
          ints[r] = static_cast<int64_t>(x.mantissa);
        }
      });
      if (!held.load()) return std::nullopt;
      out.data = ints.data();
      out.width = static_cast<uint8_t>(ColumnWidth::int64);
      break;
    }
    default: return std::nullopt;
  }
  table.value_columns[c] = out;
  return out;
}

}  // namespace tally::executor
