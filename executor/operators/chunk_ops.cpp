#include "executor/operators/chunk_ops.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>

#include "common/hll_hash.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/plan_expressions.hpp"
#include "storage/column_layout.hpp"

namespace tally::executor {

namespace {

// gather() of rows that are all present from a column held in its plain
// array: each value written once (no zeroed array to overwrite: a numeric
// is 32 bytes), a block of rows between cancel checks.
Vector gather_present(const Vector& v, const std::vector<uint32_t>& rows) {
  constexpr size_t kBlockRows = size_t{1} << 14;
  const size_t n = rows.size();
  Vector out(v.type);
  out.dictionary = v.dictionary;  // a coded text column stays coded
  out.count = n;
  auto take = [&](auto& dst, const auto& src) {
    dst.reserve(n);
    for (size_t b = 0; b < n; b += kBlockRows) {
      check_cancel_point();
      const size_t e = std::min(n, b + kBlockRows);
      for (size_t i = b; i < e; ++i) dst.push_back(src[rows[i]]);
    }
  };
  switch (physical_of(v.type.id)) {
    case Physical::boolean:
    case Physical::integer: take(out.ints, v.ints); break;
    case Physical::floating: take(out.floats, v.floats); break;
    case Physical::numeric: take(out.numerics, v.numerics); break;
    case Physical::text:
      if (v.coded()) take(out.codes, v.codes);
      else take(out.texts, v.texts);
      break;
    case Physical::interval: take(out.intervals, v.intervals); break;
  }
  if (!v.nulls.empty()) take(out.nulls, v.nulls);
  return out;
}

}  // namespace

Vector gather(const Vector& v, const std::vector<uint32_t>& rows) {
  bool any_missing = false;
  for (uint32_t r : rows) any_missing |= r == kNullRow;
  if (!any_missing && !v.shared_ints && !v.avg_parts) return gather_present(v, rows);
  Vector out(v.type);
  out.dictionary = v.dictionary;  // a coded text column stays coded
  out.resize(rows.size());
  const bool nulls = !v.nulls.empty() || any_missing;
  if (nulls) out.nulls.assign(rows.size(), 0);
  // Millions of rows (a sorted result) take long enough to need the cancel checks.
  CancelTicker ticker;
  auto copy = [&](auto& dst, const auto& src) {
    for (size_t i = 0; i < rows.size(); ++i) {
      ticker.tick();
      if (rows[i] != kNullRow) dst[i] = src[rows[i]];
    }
  };
  switch (physical_of(v.type.id)) {
    case Physical::boolean:
    case Physical::integer: {
      if (v.shared_ints || v.avg_parts) {
        for (size_t i = 0; i < rows.size(); ++i) {
          if (rows[i] != kNullRow) out.set(i, v.get(rows[i]));
        }
      } else {
        copy(out.ints, v.ints);
      }
      break;
    }
    case Physical::floating: copy(out.floats, v.floats); break;
    case Physical::numeric:
      if (v.avg_parts) {
        for (size_t i = 0; i < rows.size(); ++i) {
          if (rows[i] != kNullRow && !v.null_at(rows[i])) out.set(i, v.get(rows[i]));
        }
      } else {
        copy(out.numerics, v.numerics);
      }
      break;
    case Physical::text:
      if (v.coded()) copy(out.codes, v.codes);
      else copy(out.texts, v.texts);
      break;
    case Physical::interval: copy(out.intervals, v.intervals); break;
  }
  if (nulls) {
    for (size_t i = 0; i < rows.size(); ++i) out.nulls[i] = rows[i] == kNullRow ? 1 : (v.null_at(rows[i]) ? 1 : 0);
  }
  return out;
}

bool is_plain_array(const Vector& v) {
  const Physical p = physical_of(v.type.id);
  if (v.avg_parts) return false;
  if (p == Physical::integer || p == Physical::boolean) return true;
  return !v.shared_ints && (p == Physical::floating || (p == Physical::text && v.coded()));
}

PlainColumnWriter::PlainColumnWriter(const Vector& like, size_t rows) : out_(like.type), physical_(physical_of(like.type.id)) {
  out_.dictionary = like.dictionary;
  out_.count = rows;
  switch (physical_) {
    case Physical::floating: cpu::resize_prefaulted(out_.floats, rows); break;
    case Physical::text: cpu::resize_prefaulted(out_.codes, rows); break;
    default: cpu::resize_prefaulted(out_.ints, rows); break;
  }
  cpu::resize_prefaulted(nulls_, rows);
}

Vector PlainColumnWriter::finish() {
  if (!nulls_.empty() && std::memchr(nulls_.data(), 1, nulls_.size()) != nullptr) out_.nulls = std::move(nulls_);
  return std::move(out_);
}

Vector gather(const Vector& v, const std::vector<uint32_t>& rows, int threads) {
  if (threads <= 1 || rows.size() < (size_t{1} << 16) || !is_plain_array(v)) return gather(v, rows);
  PlainColumnWriter out(v, rows.size());
  cpu::parallel_for(threads, rows.size(), [&](int, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (rows[i] == kNullRow) out.set_null(i);
      else out.copy(i, v, rows[i]);
    }
  });
  return out.finish();
}

size_t materialized_row_bytes(const std::vector<Vector>& columns) {
  size_t bytes = 0;
  for (const Vector& v : columns) {
    const TypeId id = v.type.id;
    bytes += 1 + (is_text_kind(id)            ? sizeof(std::string) + 8
                  : id == TypeId::numeric  ? sizeof(Numeric)
                  : id == TypeId::interval ? sizeof(Interval)
                                           : sizeof(int64_t));
  }
  return bytes;
}

namespace {

// Whether every chunk's column `c` holds its values in the one array its
// physical kind names (no AvgParts; texts coded by one dictionary), so
// that the rows are copied array to array.
bool copies_as_arrays(const std::vector<DataChunk>& chunks, size_t c, Physical p) {
  if (p == Physical::interval) return false;
  const auto& first = chunks.front().columns[c];
  for (const DataChunk& chunk : chunks) {
    const Vector& v = chunk.columns[c];
    if (v.avg_parts) return false;
    if (p == Physical::text && (!v.coded() || v.dictionary != first.dictionary)) return false;
  }
  return true;
}

}  // namespace

DataChunk concat_chunks(std::vector<DataChunk>&& chunks, const std::vector<OutputColumn>& columns, int threads) {
  DataChunk out;
  for (const auto& c : columns) out.columns.emplace_back(c.type);
  std::erase_if(chunks, [](const DataChunk& chunk) { return chunk.rows == 0; });
  if (chunks.empty()) return out;
  if (chunks.size() == 1) return std::move(chunks.front());
  std::vector<size_t> offsets(chunks.size() + 1, 0);
  for (size_t i = 0; i < chunks.size(); ++i) offsets[i + 1] = offsets[i] + chunks[i].rows;
  const size_t total = offsets.back();
  out.rows = total;
  std::vector<size_t> fast, slow;
  for (size_t c = 0; c < columns.size(); ++c) {
    (copies_as_arrays(chunks, c, physical_of(out.columns[c].type.id)) ? fast : slow).push_back(c);
  }
  // The arrays are sized (zeroed, their pages first touched: for a held
  // join side of millions of rows, most of the time a copy takes) a column
  // a task, each faulted in on every core with looks at the cancel token;
  // the columns that append value by value are tasks too.
  cpu::parallel_tasks(std::max(1, threads), columns.size(), [&](int, size_t task) {
    const size_t c = task < fast.size() ? fast[task] : slow[task - fast.size()];
    Vector& dst = out.columns[c];
    const Physical p = physical_of(dst.type.id);
    if (task >= fast.size()) {
      for (const DataChunk& chunk : chunks) {
        check_cancel_point();
        append_vector(dst, chunk.columns[c]);
      }
      return;
    }
    dst.count = total;
    switch (p) {
      case Physical::boolean:
      case Physical::integer: cpu::resize_prefaulted(dst.ints, total); break;
      case Physical::floating: cpu::resize_prefaulted(dst.floats, total); break;
      case Physical::numeric: cpu::resize_prefaulted(dst.numerics, total); break;
      case Physical::text:
        cpu::resize_prefaulted(dst.codes, total);
        dst.dictionary = chunks.front().columns[c].dictionary;
        break;
      case Physical::interval: break;
    }
    const bool nulls = std::any_of(chunks.begin(), chunks.end(), [c](const DataChunk& k) { return !k.columns[c].nulls.empty(); });
    if (nulls) cpu::resize_prefaulted(dst.nulls, total);
  });
  cpu::parallel_for(std::max(1, threads), chunks.size(), [&](int, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      check_cancel_point();
      const size_t at = offsets[i], n = chunks[i].rows;
      for (const size_t c : fast) {
        const Vector& src = chunks[i].columns[c];
        Vector& dst = out.columns[c];
        switch (physical_of(dst.type.id)) {
          case Physical::boolean:
          case Physical::integer: std::copy_n(src.int_data(), n, dst.ints.begin() + static_cast<long>(at)); break;
          case Physical::floating: std::copy_n(src.floats.begin(), n, dst.floats.begin() + static_cast<long>(at)); break;
          case Physical::numeric: std::copy_n(src.numerics.begin(), n, dst.numerics.begin() + static_cast<long>(at)); break;
          case Physical::text: std::copy_n(src.codes.begin(), n, dst.codes.begin() + static_cast<long>(at)); break;
          case Physical::interval: break;
        }
        if (!src.nulls.empty()) std::copy_n(src.nulls.begin(), n, dst.nulls.begin() + static_cast<long>(at));
      }
    }
  });
  return out;
}

void append_vector(Vector& dst, const Vector& src) {
  const size_t base = dst.count;
  // Codes of one dictionary append as codes (an empty column takes the
  // source's); any other mix of forms appends strings.
  const bool codes = src.coded() && (dst.dictionary == src.dictionary || (base == 0 && !dst.coded()));
  if (codes) dst.dictionary = src.dictionary;
  else dst.materialize();
  const bool track_nulls = !src.nulls.empty() || !dst.nulls.empty();
  if (!src.nulls.empty() && dst.nulls.empty()) dst.nulls.assign(base, 0);
  switch (physical_of(dst.type.id)) {
    case Physical::boolean:
    case Physical::integer: {
      // int_data(): a streamed count shares its array (shared_ints), ints empty.
      const int64_t* values = src.int_data();
      dst.ints.insert(dst.ints.end(), values, values + src.count);
      break;
    }
    case Physical::floating: dst.floats.insert(dst.floats.end(), src.floats.begin(), src.floats.end()); break;
    case Physical::numeric: dst.numerics.insert(dst.numerics.end(), src.numerics.begin(), src.numerics.end()); break;
    case Physical::text:
      if (codes) {
        dst.codes.insert(dst.codes.end(), src.codes.begin(), src.codes.end());
      } else if (src.coded()) {
        dst.texts.reserve(base + src.count);
        for (size_t i = 0; i < src.count; ++i)
          dst.texts.emplace_back(src.null_at(i) ? std::string_view() : src.text_at(i));
      } else {
        dst.texts.insert(dst.texts.end(), src.texts.begin(), src.texts.end());
      }
      break;
    case Physical::interval: dst.intervals.insert(dst.intervals.end(), src.intervals.begin(), src.intervals.end()); break;
  }
  if (track_nulls) {
    if (src.nulls.empty()) dst.nulls.resize(base + src.count, 0);
    else dst.nulls.insert(dst.nulls.end(), src.nulls.begin(), src.nulls.end());
  }
  dst.count = base + src.count;
}

void append_vector(Vector& dst, Vector&& src) {
  // What the copy would make of an empty dst is src's arrays as they are:
  // the same physical kind, src's codes where dst has no other dictionary.
  const bool empty = dst.count == 0 && !dst.avg_parts && !dst.shared_ints;
  const bool same_form = physical_of(dst.type.id) == physical_of(src.type.id) && !src.avg_parts && !src.shared_ints &&
                         (!dst.coded() || dst.dictionary == src.dictionary);
  if (!empty || !same_form) {
    append_vector(dst, static_cast<const Vector&>(src));
    return;
  }
  const SqlType type = dst.type;
  dst = std::move(src);
  dst.type = type;
}

std::vector<uint32_t> true_rows(const Vector& mask) {
  // Without a branch per row: a filter's outcome is as good as random, and
  // a mispredicted push_back per row cost more than the test itself.
  std::vector<uint32_t> rows(mask.count);
  const int64_t* v = mask.int_data();
  const uint8_t* nulls = mask.nulls.empty() ? nullptr : mask.nulls.data();
  size_t n = 0;
  for (size_t r = 0; r < mask.count; ++r) {
    rows[n] = static_cast<uint32_t>(r);
    n += (v[r] != 0 && (nulls == nullptr || nulls[r] == 0)) ? 1 : 0;
  }
  rows.resize(n);
  return rows;
}

DataChunk gather_chunk(const DataChunk& chunk, const std::vector<uint32_t>& rows) {
  DataChunk out;
  out.rows = rows.size();
  for (const auto& c : chunk.columns) out.columns.push_back(gather(c, rows));
  return out;
}

EvalInput space_input(const DataChunk& chunk, const std::vector<int>& layout, size_t width,
                      const std::vector<Value>* parameters) {
  EvalInput input;
  input.rows = chunk.rows;
  input.parameters = parameters;
  input.columns.assign(width, nullptr);
  for (size_t i = 0; i < layout.size(); ++i) input.columns[static_cast<size_t>(layout[i])] = &chunk.columns[i];
  return input;
}

namespace {

// char(n) compares ignoring trailing blanks, so its keys hash and match without them.
std::string_view key_text(const Vector& v, size_t row) {
  std::string_view s = v.text_at(row);
  if (v.type.id == TypeId::bpchar) {
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  }
  return s;
}

uint64_t column_hash(const Vector& k, size_t row) {
  switch (physical_of(k.type.id)) {
    case Physical::boolean:
    case Physical::integer: return hll_hash(static_cast<uint64_t>(k.int_data()[row]));
    case Physical::text: return std::hash<std::string_view>{}(key_text(k, row));
    default: return hash_value(k.get(row));
  }
}

bool column_equal(const Vector& a, size_t ra, const Vector& b, size_t rb) {
  switch (physical_of(a.type.id)) {
    case Physical::boolean:
    case Physical::integer: return a.int_data()[ra] == b.int_data()[rb];
    case Physical::text: return key_text(a, ra) == key_text(b, rb);
    default: return compare_values(a.get(ra), b.get(rb)) == 0;
  }
}

uint64_t mix_hash(uint64_t h, uint64_t x) { return hll_hash(h ^ x) + 0x632be59bd9b4e019ULL; }

constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ULL;
// What a NULL contributes to a row hash (NULLs are equal to each other there).
constexpr uint64_t kNullHash = 0x5bd1e9955bd1e995ULL;

}  // namespace

bool has_null_key(const std::vector<Vector>& keys, size_t row) {
  for (const auto& k : keys) {
    if (k.null_at(row)) return true;
  }
  return false;
}

uint64_t key_hash(const std::vector<Vector>& keys, size_t row) {
  uint64_t h = kSeed;
  for (const auto& k : keys) h = mix_hash(h, column_hash(k, row));
  return h;
}

void key_hashes(const std::vector<Vector>& keys, size_t begin, size_t end, uint64_t* out) {
  const size_t n = end - begin;
  for (size_t i = 0; i < n; ++i) out[i] = kSeed;
  for (const auto& k : keys) {
    const Physical p = physical_of(k.type.id);
    if (p == Physical::integer || p == Physical::boolean) {
      const int64_t* v = k.int_data() + begin;
      for (size_t i = 0; i < n; ++i) out[i] = mix_hash(out[i], hll_hash(static_cast<uint64_t>(v[i])));
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = mix_hash(out[i], column_hash(k, begin + i));
    }
  }
}

bool keys_equal(const std::vector<Vector>& a, size_t ra, const std::vector<Vector>& b, size_t rb) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!column_equal(a[i], ra, b[i], rb)) return false;
  }
  return true;
}

uint64_t row_hash(const std::vector<Vector>& columns, size_t row) {
  uint64_t h = kSeed;
  for (const auto& c : columns) h = mix_hash(h, c.null_at(row) ? kNullHash : column_hash(c, row));
  return h;
}

uint64_t row_hash(std::span<const Vector* const> columns, size_t row) {
  uint64_t h = kSeed;
  for (const Vector* c : columns) h = mix_hash(h, c->null_at(row) ? kNullHash : column_hash(*c, row));
  return h;
}

bool rows_equal(std::span<const Vector* const> columns, size_t ra, size_t rb) {
  for (const Vector* c : columns) {
    const bool na = c->null_at(ra), nb = c->null_at(rb);
    if (na || nb) {
      if (na != nb) return false;
      continue;
    }
    if (!column_equal(*c, ra, *c, rb)) return false;
  }
  return true;
}

bool rows_equal(const std::vector<Vector>& a, size_t ra, const std::vector<Vector>& b, size_t rb) {
  for (size_t i = 0; i < a.size(); ++i) {
    const bool na = a[i].null_at(ra), nb = b[i].null_at(rb);
    if (na || nb) {
      if (na != nb) return false;
      continue;
    }
    if (!column_equal(a[i], ra, b[i], rb)) return false;
  }
  return true;
}


EvalInput narrowed_input(const EvalInput& input, const std::vector<uint32_t>& rows,
                         const std::vector<Expr*>& readers, std::vector<Vector>& storage) {
  std::set<int> read;
  bool every_column = false;
  for (Expr* e : readers) {
    every_column = every_column || reads_unlisted_columns(*e);
    collect_refs(*e, read);
  }
  EvalInput out = input;
  out.rows = rows.size();
  storage.resize(input.columns.size());
  for (size_t c = 0; c < input.columns.size(); ++c) {
    out.columns[c] = nullptr;
    if (input.columns[c] == nullptr || (!every_column && read.count(static_cast<int>(c)) == 0)) continue;
    storage[c] = gather(*input.columns[c], rows);
    out.columns[c] = &storage[c];
  }
  return out;
}

std::vector<Vector*> columns_by_space(DataChunk& chunk, const std::vector<int>& layout, size_t width) {
  std::vector<Vector*> owned(width, nullptr);
  for (size_t c = 0; c < layout.size() && c < chunk.columns.size(); ++c)
    if (layout[c] >= 0 && static_cast<size_t>(layout[c]) < width) owned[static_cast<size_t>(layout[c])] = &chunk.columns[c];
  return owned;
}

std::vector<Vector> evaluate_taking(const std::vector<const Expr*>& exprs, const EvalInput& input,
                                    const std::vector<Vector*>& owned) {
  auto bare_index = [](const Expr* e) {
    const auto* ref = dynamic_cast<const ColumnExpr*>(e);
    return ref != nullptr ? ref->index : -1;
  };
  std::vector<Vector*> taken(exprs.size(), nullptr);
  for (size_t i = 0; i < exprs.size(); ++i) {
    const int index = bare_index(exprs[i]);
    if (index < 0 || static_cast<size_t>(index) >= owned.size()) continue;
    Vector* column = owned[static_cast<size_t>(index)];
    if (column == nullptr || column->count != input.rows) continue;
    if (std::count_if(exprs.begin(), exprs.end(), [&](const Expr* e) { return bare_index(e) == index; }) == 1)
      taken[i] = column;
  }
  std::vector<Vector> out(exprs.size());
  for (size_t i = 0; i < exprs.size(); ++i)
    if (taken[i] == nullptr) out[i] = exprs[i]->evaluate(input);
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (taken[i] == nullptr) continue;
    out[i] = std::move(*taken[i]);
    taken[i]->count = 0;
  }
  return out;
}

}  // namespace tally::executor
