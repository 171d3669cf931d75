#include "executor/dml/result_append.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cast.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/value_codec.hpp"
#include "executor/dml/column_default.hpp"
#include "executor/dml/constant_value.hpp"
#include "storage/column_layout.hpp"
#include "storage/numeric_slot.hpp"
#include "storage/string_dictionary.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {
namespace {

// Rows converted per slice: bounds the staging buffers of a large result.
constexpr size_t slice_rows = size_t{1} << 16;

// One target column of a slice in its stored form (text: dictionary codes).
struct StagedColumn {
  std::vector<uint8_t> data;
  std::vector<uint8_t> valid;  // 1 = non-NULL; empty while the slice has no NULL
};

// Whether a source column's values are stored unchanged in the target column:
// the same type, with no length or precision rule to apply. CREATE TABLE AS
// always, INSERT ... SELECT usually.
bool stored_as_is(SqlType from, SqlType to) {
  if (from.id != to.id) return false;
  switch (to.id) {
    case TypeId::boolean:
    case TypeId::int2:
    case TypeId::int4:
    case TypeId::date:
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::float4:
    case TypeId::float8:
    case TypeId::bytea: return true;
    case TypeId::time:
    case TypeId::timetz:
    case TypeId::text:
    case TypeId::varchar: return to.typmod < 0 || from.typmod == to.typmod;
    default: return false;
  }
}

// How the codes of a coded text source column (value.hpp) become the
// target column's codes, decided at the first slice and kept for the append.
struct CodeMap {
  bool decided = false;
  // The target took the source dictionary's entries: its codes are the source's.
  bool same = false;
  // Source code -> target code (-1: not met yet): an array over the source
  // dictionary when it is not much larger than the result, else a hash map.
  std::vector<int32_t> dense;
  std::unordered_map<int32_t, int32_t> sparse;
  // Every code of the column is mapped (map_all_codes): staging only reads
  // the map, so it may run on several threads.
  bool complete = false;
};

// An empty target column adopts the source's entries when most of them are
// used (a GROUP BY key's codes are a large part of its column's dictionary):
// one bulk copy instead of an intern per row. Otherwise each distinct code
// used is interned once. The count of codes used stops at half the entries:
// a key column of 1e8 groups reaches it within its first million rows, and
// reading all of them took a serial pass per text column before any chunk
// was written.
void decide_codes(const Vector& src, storage::TableAppender& appender, int column, CodeMap& map) {
  map.decided = true;
  const storage::StringDictionary& source = *src.dictionary;
  const auto entries = static_cast<size_t>(source.size());
  if (entries <= 2 * src.count && appender.working_dictionary(column).size() == 0) {
    std::vector<uint8_t> seen(entries, 0);
    size_t used = 0;
    for (size_t i = 0; i < src.count && 2 * used < entries; ++i) {
      if (src.null_at(i)) continue;
      uint8_t& s = seen[static_cast<size_t>(src.codes[i])];
      used += s == 0;
      s = 1;
    }
    if (2 * used >= entries && appender.adopt_dictionary(column, src.dictionary)) {
      map.same = true;
      return;
    }
  }
  if (entries <= 4 * src.count + 1024) map.dense.assign(entries, -1);
}

// Stages rows [begin, begin + rows) of a coded text column as target codes.
void stage_codes(const Vector& src, storage::TableAppender& appender, int column, size_t begin, size_t rows,
                 CodeMap& map, int32_t* codes) {
  if (!map.decided) decide_codes(src, appender, column, map);
  if (map.same) {
    std::memcpy(codes, src.codes.data() + begin, rows * sizeof(int32_t));
    return;
  }
  const storage::StringDictionary& source = *src.dictionary;
  auto intern = [&](int32_t code) {
    const std::string_view v = source.at(code);
    return appender.intern(column, v, storage::StringDictionary::hash(v));
  };
  for (size_t i = 0; i < rows; ++i) {
    if (src.null_at(begin + i)) continue;
    const int32_t code = src.codes[begin + i];
    if (!map.dense.empty()) {
      int32_t& to = map.dense[static_cast<size_t>(code)];
      if (to < 0) to = intern(code);
      codes[i] = to;
    } else if (map.complete) {
      codes[i] = map.sparse.find(code)->second;
    } else {
      auto [at, added] = map.sparse.try_emplace(code, 0);
      if (added) at->second = intern(code);
      codes[i] = at->second;
    }
  }
}

// Maps every code of a coded text column on the caller's thread (one
// writer per dictionary): staging then only reads the map.
void map_all_codes(const Vector& src, storage::TableAppender& appender, int column, CodeMap& map) {
  if (!map.decided) decide_codes(src, appender, column, map);
  if (!map.same) {
    std::vector<int32_t> scratch(std::min(src.count, slice_rows));
    for (size_t begin = 0; begin < src.count; begin += slice_rows) {
      const size_t rows = std::min(slice_rows, src.count - begin);
      stage_codes(src, appender, column, begin, rows, map, scratch.data());
    }
  }
  map.complete = true;
}

void mark_null(StagedColumn& out, size_t row, size_t rows) {
  if (out.valid.empty()) out.valid.assign(rows, 1);
  out.valid[row] = 0;
}

template <class T>
void store_ints(const Vector& src, size_t begin, size_t rows, uint8_t* data) {
  const int64_t* values = src.int_data() + begin;
  T* out = reinterpret_cast<T*>(data);
  for (size_t i = 0; i < rows; ++i) out[i] = static_cast<T>(values[i]);
}

// Stages rows [begin, begin + rows) of a column stored as is into out.data
// (sized here): a tight loop per type, no Value per row. Values stored
// unchanged are copied in without clearing the buffer first: a million-row
// result's columns are megabytes each.
void stage_as_is(const Vector& src, storage::TableAppender& appender, int column, size_t begin, size_t rows,
                 CodeMap& map, StagedColumn& out) {
  const size_t width = static_cast<size_t>(storage_width(src.type));
  auto sized = [&] {
    out.data.resize(rows * width);
    return out.data.data();
  };
  auto copied = [&](const void* from) {
    const auto* bytes = static_cast<const uint8_t*>(from);
    out.data.assign(bytes, bytes + rows * width);
  };
  switch (src.type.id) {
    case TypeId::boolean: store_ints<uint8_t>(src, begin, rows, sized()); break;
    case TypeId::int2: store_ints<int16_t>(src, begin, rows, sized()); break;
    case TypeId::int4:
    case TypeId::date: store_ints<int32_t>(src, begin, rows, sized()); break;
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time:
    case TypeId::timetz: copied(src.int_data() + begin); break;
    case TypeId::float8: copied(src.floats.data() + begin); break;
    case TypeId::float4: {
      float* f = reinterpret_cast<float*>(sized());
      for (size_t i = 0; i < rows; ++i) f[i] = static_cast<float>(src.floats[begin + i]);
      break;
    }
    default: {  // text kinds: hashes first, so that each probe's index slot is fetched ahead
      int32_t* codes = reinterpret_cast<int32_t*>(sized());
      if (src.coded()) {
        stage_codes(src, appender, column, begin, rows, map, codes);
        break;
      }
      std::vector<uint64_t> hashes(rows);
      for (size_t i = 0; i < rows; ++i) hashes[i] = storage::StringDictionary::hash(src.texts[begin + i]);
      const storage::StringDictionary& dictionary = appender.working_dictionary(column);
      constexpr size_t ahead = 8;
      for (size_t i = 0; i < rows; ++i) {
        if (i + ahead < rows) dictionary.prefetch(hashes[i + ahead]);
        if (!src.null_at(begin + i)) codes[i] = appender.intern(column, src.texts[begin + i], hashes[i]);
      }
      break;
    }
  }
  uint8_t* data = out.data.data();
  if (src.nulls.empty()) return;
  for (size_t i = 0; i < rows; ++i)
    if (src.nulls[begin + i] != 0) {
      mark_null(out, i, rows);
      std::memset(data + i * width, 0, width);  // stored NULLs hold zeros
    }
}

// Stages one value that needs PostgreSQL's assignment cast.
void stage_cast(const Vector& src, SqlType type, storage::TableAppender& appender, int column, size_t row, size_t i,
                size_t rows, StagedColumn& out) {
  const Value v = cast_value(src.get(row), src.type, type, false);
  if (is_null(v)) {
    mark_null(out, i, rows);
    return;
  }
  void* slot = out.data.data() + i * static_cast<size_t>(storage_width(type));
  switch (type.id) {
    case TypeId::boolean: *static_cast<uint8_t*>(slot) = std::get<bool>(v) ? 1 : 0; break;
    case TypeId::int2: *static_cast<int16_t*>(slot) = static_cast<int16_t>(std::get<int64_t>(v)); break;
    case TypeId::int4:
    case TypeId::date: *static_cast<int32_t*>(slot) = static_cast<int32_t>(std::get<int64_t>(v)); break;
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time:
    case TypeId::timetz: *static_cast<int64_t*>(slot) = std::get<int64_t>(v); break;
    case TypeId::float4: *static_cast<float*>(slot) = static_cast<float>(std::get<double>(v)); break;
    case TypeId::float8: *static_cast<double*>(slot) = std::get<double>(v); break;
    case TypeId::numeric: {
      // cast_value applied the typmod; unconstrained columns keep each value's scale.
      const Numeric& n = std::get<Numeric>(v);
      storage::store_numeric(type, slot, n.mantissa, n.scale);
      break;
    }
    default: {
      const std::string& s = std::get<std::string>(v);
      *static_cast<int32_t*>(slot) = appender.intern(column, s, storage::StringDictionary::hash(s));
      break;
    }
  }
}

// Results of at least this many rows are staged on several threads.
constexpr size_t parallel_rows = size_t{1} << 16;
// The chunks of a large result being written at once hold at most about
// this many bytes (beside the wave being staged).
constexpr size_t writing_bytes = size_t{2} << 30;

void check_not_null(const TableColumn& column, const StagedColumn& out, size_t rows, const std::string& table_name) {
  if (column.not_null && !out.valid.empty() && std::memchr(out.valid.data(), 0, rows) != nullptr) {
    throw Error(SqlState::not_null_violation, "null value in column \"" + column.name + "\" of relation \"" +
                                                  table_name + "\" violates not-null constraint");
  }
}

// Whether every column stages off the caller's thread: stored as is, and
// text only when coded (its codes mapped first, map_all_codes). Casts stay
// on the caller's thread: a cast to text interns, and the first failing
// row must be the one PostgreSQL reports.
bool stages_off_thread(const ResultSet& result, const std::vector<int>& source_of, const std::vector<TableColumn>& columns) {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (source_of[c] < 0) continue;
    const Vector& src = result.columns[static_cast<size_t>(source_of[c])];
    if (!stored_as_is(src.type, columns[c].type) || src.avg_parts != nullptr) return false;
    if (is_string_stored(columns[c].type.id) && !src.coded()) return false;
  }
  return true;
}

// A large result as whole chunks: each (chunk, column) staged by a worker
// of the pool into a chunk's buffer, which the appender then takes without
// a copy, in row order. A wave of chunks (one per thread) at a time bounds
// the staged memory.
void append_chunks_in_parallel(storage::TableAppender& appender, const ResultSet& result,
                               const std::vector<int>& source_of, const std::vector<TableColumn>& columns,
                               const std::string& table_name, std::vector<CodeMap>& code_maps) {
  const size_t ncols = columns.size();
  const size_t cap = appender.chunk_rows();
  const int threads = cpu::WorkerPool::shared().workers() + 1;
  const size_t chunks = (result.rows + cap - 1) / cap;
  const size_t wave = static_cast<size_t>(threads);
  // A wave's chunks write while the next one is staged, as many as fit
  // writing_bytes (a wide table's chunks are large).
  size_t chunk_bytes = 0;
  for (const TableColumn& column : columns) chunk_bytes += cap * (static_cast<size_t>(storage_width(column.type)) + 1);
  appender.set_chunks_in_flight(std::clamp<size_t>(writing_bytes / std::max<size_t>(chunk_bytes, 1), 2, wave));
  for (size_t first = 0; first < chunks; first += wave) {
    const size_t n = std::min(wave, chunks - first);
    std::vector<std::vector<std::vector<uint8_t>>> data(n, std::vector<std::vector<uint8_t>>(ncols));
    std::vector<std::vector<std::vector<uint8_t>>> valid(n, std::vector<std::vector<uint8_t>>(ncols));
    check_cancel_point();
    cpu::parallel_tasks(threads, n * ncols, [&](int, size_t task) {
      check_cancel_point();
      const size_t j = task / ncols, c = task % ncols;
      const size_t begin = (first + j) * cap, rows = std::min(cap, result.rows - begin);
      const TableColumn& column = columns[c];
      const size_t width = static_cast<size_t>(storage_width(column.type));
      StagedColumn out;
      out.data.reserve(cap * width);  // a part chunk keeps the appender's room for more rows
      if (source_of[c] < 0) {
        out.data.resize(rows * width);
        out.valid.assign(rows, 0);
      } else {
        const Vector& src = result.columns[static_cast<size_t>(source_of[c])];
        stage_as_is(src, appender, static_cast<int>(c), begin, rows, code_maps[c], out);
      }
      check_not_null(column, out, rows, table_name);
      data[j][c] = std::move(out.data);
      valid[j][c] = std::move(out.valid);
    });
    for (size_t j = 0; j < n; ++j) {
      appender.append_columns(std::min(cap, result.rows - (first + j) * cap), data[j], valid[j]);
    }
  }
}

}  // namespace

void check_assignable(const ResultSet& result, const std::vector<int>& targets,
                      const std::vector<TableColumn>& columns) {
  for (size_t i = 0; i < targets.size() && i < result.columns.size(); ++i) {
    const TableColumn& column = columns[static_cast<size_t>(targets[i])];
    const SqlType from = result.columns[i].type, to = column.type;
    if (!can_cast(from.id, to.id, CastContext::assignment)) {
      throw Error(SqlState::datatype_mismatch, "column \"" + column.name + "\" is of type " + format_type(to) +
                                                   " but expression is of type " + format_type(from))
          .with_hint("You will need to rewrite or cast the expression.");
    }
  }
}

uint64_t append_result_rows(storage::TableAppender& appender, const ResultSet& result,
                            const std::vector<int>& targets, const std::vector<TableColumn>& columns,
                            const std::string& table_name) {
  const size_t ncols = columns.size();
  std::vector<int> source_of(ncols, -1);
  for (size_t i = 0; i < targets.size(); ++i) source_of[static_cast<size_t>(targets[i])] = static_cast<int>(i);
  std::vector<CodeMap> code_maps(ncols);
  if (result.rows >= parallel_rows && stages_off_thread(result, source_of, columns)) {
    for (size_t c = 0; c < ncols; ++c) {
      if (source_of[c] < 0) continue;
      const Vector& src = result.columns[static_cast<size_t>(source_of[c])];
      if (src.coded()) map_all_codes(src, appender, static_cast<int>(c), code_maps[c]);
    }
    append_chunks_in_parallel(appender, result, source_of, columns, table_name, code_maps);
    return result.rows;
  }
  std::vector<StagedColumn> staged(ncols);
  std::vector<const uint8_t*> data(ncols), valid(ncols);
  for (size_t begin = 0; begin < result.rows; begin += slice_rows) {
    check_cancel_point();
    const size_t rows = std::min(slice_rows, result.rows - begin);
    for (size_t c = 0; c < ncols; ++c) {
      const TableColumn& column = columns[c];
      StagedColumn& out = staged[c];
      out.data.assign(rows * static_cast<size_t>(storage_width(column.type)), 0);
      out.valid.clear();
      const int col = static_cast<int>(c);
      if (source_of[c] < 0) {
        out.valid.assign(rows, 0);
      } else {
        const Vector& src = result.columns[static_cast<size_t>(source_of[c])];
        if (stored_as_is(src.type, column.type) && src.avg_parts == nullptr) {
          stage_as_is(src, appender, col, begin, rows, code_maps[c], out);
        } else {
          for (size_t i = 0; i < rows; ++i) stage_cast(src, column.type, appender, col, begin + i, i, rows, out);
        }
      }
      check_not_null(column, out, rows, table_name);
      data[c] = out.data.data();
      valid[c] = out.valid.empty() ? nullptr : out.valid.data();
    }
    appender.append_rows(rows, data, valid);
  }
  return result.rows;
}

void add_default_columns(const StatementContext& ctx, const std::string& name, ResultSet& result,
                         std::vector<int>& targets) {
  const auto stored = ctx.find_table(name);
  if (!stored) return;
  for (size_t c = 0; c < stored->def.columns.size(); ++c) {
    const catalog::ColumnDef& column = stored->def.columns[c];
    if (column.default_expr.empty() || std::count(targets.begin(), targets.end(), static_cast<int>(c)) > 0) continue;
    Vector values(column.type);
    for (size_t row = 0; row < result.rows; ++row) {
      const ConstantValue v = cast_constant(ctx, dml::column_default(ctx, column), column.type, false, column.name);
      values.push(v.kind == ConstantValue::Kind::null ? Value{Null{}} : parse_text(column.type, v.text));
    }
    result.fields.push_back(describe_column(column.name, column.type));
    result.columns.push_back(std::move(values));
    targets.push_back(static_cast<int>(c));
  }
}

}  // namespace tally::executor::dml
