// EngineAggregator feeding the engine: stored chunks as they are (raw) or
// evaluated keys and inputs, keys narrowed or interned to fixed width.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/column_program_run.hpp"
#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "common/shared_zeros.hpp"
#include "executor/dictionary_order.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/finalize.hpp"
#include "executor/numeric_vector.hpp"

namespace tally::executor::engine_aggregation {

bool EngineAggregator::wants_raw() const {
  // Raw chunks work when keys and inputs are bare columns (no expression to evaluate) and no FILTER.
  if (mode_ == KeyMode::interned || (mode_ == KeyMode::evaluated_tuple && spec_.key_programs.empty())) return false;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const bool program = i < spec_.value_programs.size() && !spec_.value_programs[i].empty();
    if (!program && !dynamic_cast<const ColumnExpr*>(inputs_[i])) return false;
    // A text column's stored codes are not its ranks.
    if (!program && text_ranks_[i].order) return false;
  }
  for (const auto& a : aggregates_) {
    if (a.filter) return false;
  }
  return run_->passes() == 1;
}

std::vector<int> EngineAggregator::raw_columns(size_t chunk, const std::vector<int>& scan_columns) {
  if (!on_gpu_ || !engine_table_ || table_oid_ == 0) return scan_columns;
  const std::optional<uint64_t> chunk_id = engine_table_->chunk_id(chunk);
  if (!chunk_id) return scan_columns;
  // Text keys need their dictionary for the result: from the table, once,
  // so that a held key column is not read for it (load_dictionaries reads
  // a chunk only when the table keeps no dictionary).
  if (mode_ == KeyMode::dict_column && !dictionary_) dictionary_ = table_->dictionary(key_column_);
  // (Evaluated keys' texts are coded as their TextKeyCodes say.)
  if (key_columns_mode(mode_) && mode_ != KeyMode::evaluated_tuple) load_dictionaries();
  std::vector<int> read;
  for (const int column : scan_columns) {
    const TypeId type = table_->columns()[static_cast<size_t>(column)].type.id;
    const bool dictionary_missing = mode_ == KeyMode::dict_column && column == key_column_ && !dictionary_;
    const ColumnIdentity id{table_oid_, *chunk_id, static_cast<uint32_t>(column)};
    if (dictionary_missing || !run_->hold(id, stored_width(type))) read.push_back(column);
  }
  held_columns_ += scan_columns.size() - read.size();
  scanned_columns_ += scan_columns.size();
  return read;
}

struct EngineAggregator::RawChunk final : PreparedWork {
  std::shared_ptr<const storage::ChunkBatch> batch;
  std::vector<int> batch_columns;
  ChunkInput in;
  std::vector<std::vector<int32_t>> widened;
  std::shared_ptr<void> evaluated;  // the run's prepare()
};

namespace {

const storage::ColumnVector* column_in(const storage::ChunkBatch* batch, const std::vector<int>& batch_columns,
                                       int table_column) {
  for (size_t i = 0; i < batch_columns.size(); ++i) {
    if (batch_columns[i] == table_column) return &batch->columns[i];
  }
  return nullptr;
}

}  // namespace

void EngineAggregator::raw_input(size_t chunk, size_t rows, const storage::ChunkBatch* batch,
                                 const std::vector<int>& batch_columns, RawChunk& raw) const {
  std::optional<uint64_t> chunk_id;
  if (on_gpu_ && engine_table_) chunk_id = engine_table_->chunk_id(chunk);
  // Stored columns carry their identity, so the GPU engine can keep them
  // resident in its device column cache; a column missing from the batch
  // is one the run holds (raw_columns).
  auto identity_of = [&](int table_column) {
    ColumnIdentity id;
    if (chunk_id && table_oid_ != 0) id = ColumnIdentity{table_oid_, *chunk_id, static_cast<uint32_t>(table_column)};
    return id;
  };
  ChunkInput& in = raw.in;
  in.rows = rows;
  std::vector<std::vector<int32_t>>& widened = raw.widened;
  widened.reserve(inputs_.size() + 1);
  auto view_of = [&](int table_column) {
    ColumnView v;
    v.identity = identity_of(table_column);
    const storage::ColumnVector* stored = column_in(batch, batch_columns, table_column);
    if (stored == nullptr) {
      if (!v.identity.known()) throw Error(SqlState::internal_error, "scan column missing");
      v.width = stored_width(table_->columns()[static_cast<size_t>(table_column)].type.id);
      return v;
    }
    const storage::ColumnVector& col = *stored;
    v.validity = col.has_nulls() ? col.validity.data() : nullptr;
    v.width = stored_width(col.type.id);
    // Stored at the engine's width, or narrower (int2, bool) and widened.
    v.data = stored_narrower(col.type.id) ? static_cast<const void*>(widened.emplace_back(widened_to_int32(col)).data())
                                          : static_cast<const void*>(col.data.data());
    return v;
  };
  if (mode_ == KeyMode::none) {
    in.keys = ColumnView{ColumnWidth::int64, shared_zeros(rows), nullptr};
  } else if (key_columns_mode(mode_)) {
    // The key columns as stored (and resident on the GPU per column): the
    // engine packs them.
    in.keys = ColumnView{ColumnWidth::int64, nullptr, nullptr};
    for (const int column : packed_columns_) in.key_columns.push_back(view_of(column));
    // Key programs' parts: computed by the engine from program_columns.
    for (size_t k = 0; k < spec_.key_programs.size(); ++k) in.key_columns.push_back(ColumnView{ColumnWidth::int64, nullptr, nullptr, {}});
  } else {
    in.keys = view_of(key_column_);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (i < spec_.value_programs.size() && !spec_.value_programs[i].empty()) {
      // Computed by the engine from program_columns.
      in.values.push_back(ColumnView{spec_.value_widths[i], nullptr, nullptr, {}});
      continue;
    }
    in.values.push_back(view_of(dynamic_cast<const ColumnExpr*>(inputs_[i])->index));
  }
  for (const int column : program_columns_) in.program_columns.push_back(view_of(column));
  in.filters.assign(aggregates_.size(), nullptr);
}

void EngineAggregator::keep_dictionaries(const storage::ChunkBatch* batch, const std::vector<int>& batch_columns) {
  if (key_columns_mode(mode_)) {
    for (size_t k = 0; k < packed_columns_.size(); ++k) {
      const storage::ColumnVector* key = column_in(batch, batch_columns, packed_columns_[k]);
      if (key && key->dictionary) part_dictionaries_[k] = key->dictionary;
    }
  } else if (mode_ == KeyMode::dict_column) {
    const storage::ColumnVector* key = column_in(batch, batch_columns, key_column_);
    if (key && key->dictionary) dictionary_ = key->dictionary;
  }
}

void EngineAggregator::run_sink(const ChunkInput& in) {
  try {
    run_->sink(in);
  } catch (const ProgramOverflow&) {
    // A value PostgreSQL reports as an error, or one past an engine
    // input's 18 digits: the host path answers exactly.
    throw EngineInputOverflow(SqlState::numeric_value_out_of_range, "an engine program overflowed");
  }
}

void EngineAggregator::sink_raw(size_t chunk, size_t rows, const storage::ChunkBatch* batch,
                                const std::vector<int>& batch_columns) {
  RawChunk raw;
  raw_input(chunk, rows, batch, batch_columns, raw);
  keep_dictionaries(batch, batch_columns);
  run_sink(raw.in);
}

std::shared_ptr<PreparedWork> EngineAggregator::prepare_raw(size_t chunk, size_t rows,
                                                            const std::shared_ptr<const storage::ChunkBatch>& batch,
                                                            const std::vector<int>& batch_columns) const {
  // The CPU engine's programs only: a GPU run is asked for its held
  // columns chunk by chunk, in order, and evaluates on its own side.
  if (on_gpu_ || !has_programs(spec_)) return nullptr;
  auto raw = std::make_shared<RawChunk>();
  raw->batch = batch;
  raw->batch_columns = batch_columns;
  raw_input(chunk, rows, batch.get(), batch_columns, *raw);
  try {
    raw->evaluated = run_->prepare(raw->in);
  } catch (const ProgramOverflow&) {
    throw EngineInputOverflow(SqlState::numeric_value_out_of_range, "an engine program overflowed");
  }
  return raw;
}

void EngineAggregator::sink_raw_prepared(PreparedWork* work) {
  auto& raw = static_cast<RawChunk&>(*work);
  keep_dictionaries(raw.batch.get(), raw.batch_columns);
  run_sink(raw.in);
}

namespace {

// A chunk's keys and inputs in the engine's form (prepare()): the
// ChunkInput and the arrays its views point into. Each array is an element
// of its own std::vector, whose heap buffer stays put as the outer vector
// grows.
struct EngineChunk final : PreparedWork {
  ChunkInput in;
  std::vector<Vector> evaluated;                // inputs whose own arrays the views read
  std::vector<Vector> interned_keys;            // interned mode: coded by sink_prepared()
  // dict_column mode: the key column as its dictionary's codes (in.keys
  // reads them), or empty where the evaluated column holds strings.
  Vector coded_key;
  std::vector<std::vector<int64_t>> int64s;
  std::vector<std::vector<int32_t>> int32s;
  std::vector<std::vector<uint8_t>> bytes;      // validity, FILTER masks
  std::vector<int64_t> keys;
  std::vector<uint8_t> key_valid;
};

// The ranks of a text column's rows in `ranks`' order (0 for NULL rows),
// into `out`: from the codes where the rows are coded in its dictionary,
// else each text looked up there (a stored column's values are all in it).
std::vector<int64_t>& text_ranks(const Vector& v, const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                 const DictionaryOrder& order, std::vector<int64_t>& out) {
  const std::vector<int32_t>& rank_of_code = order.rank_of_code;
  const bool coded = v.coded() && v.dictionary == dictionary;
  for (size_t r = 0; r < v.count; ++r) {
    if (v.null_at(r)) continue;
    const int32_t code = coded ? v.codes[r] : dictionary->find(v.text_at(r));
    if (code < 0 || static_cast<size_t>(code) >= rank_of_code.size())
      throw Error(SqlState::internal_error, "a text value outside its column's dictionary");
    out[r] = rank_of_code[static_cast<size_t>(code)];
  }
  return out;
}

// 1 = valid, from a Vector's NULL flags (empty when none is NULL).
const uint8_t* validity_of(const Vector& v, std::vector<std::vector<uint8_t>>& bytes) {
  if (v.nulls.empty()) return nullptr;
  bytes.emplace_back(v.count);
  for (size_t r = 0; r < v.count; ++r) bytes.back()[r] = v.nulls[r] ? 0 : 1;
  return bytes.back().data();
}

}  // namespace

void EngineAggregator::sink(const EvalInput& rows) {
  const std::shared_ptr<PreparedWork> work = prepare(rows);
  sink_prepared(work.get(), rows);
}

std::shared_ptr<PreparedWork> EngineAggregator::prepare(const EvalInput& rows) const {
  auto work = std::make_shared<EngineChunk>();
  EngineChunk& chunk = *work;
  ChunkInput& in = chunk.in;
  in.rows = rows.rows;
  // Keys.
  if (key_columns_mode(mode_)) {
    evaluated_key_columns(rows, in, chunk.int64s, chunk.bytes);
  } else if (mode_ == KeyMode::int_column) {
    const Vector v = keys_[0]->evaluate(rows);
    const uint8_t* valid = validity_of(v, chunk.bytes);
    if (spec_.key_width == ColumnWidth::int32) {
      chunk.int32s.emplace_back(v.ints.begin(), v.ints.end());
      in.keys = ColumnView{ColumnWidth::int32, chunk.int32s.back().data(), valid};
    } else {
      chunk.keys.assign(v.ints.begin(), v.ints.end());
      in.keys = ColumnView{ColumnWidth::int64, chunk.keys.data(), valid};
    }
  } else if (mode_ == KeyMode::none) {
    in.keys = ColumnView{ColumnWidth::int64, shared_zeros(rows.rows), nullptr};
  } else if (mode_ == KeyMode::dict_column) {
    Vector v = keys_[0]->evaluate(rows);
    if (v.coded()) {
      // A stored text column's codes are the keys as the raw path takes
      // them: no string is built or interned per row.
      chunk.coded_key = std::move(v);
      in.keys = ColumnView{ColumnWidth::int32, chunk.coded_key.codes.data(), validity_of(chunk.coded_key, chunk.bytes)};
    } else {
      chunk.interned_keys.push_back(std::move(v));
    }
  } else {
    // Interned: the key values now, their query-local codes in chunk order.
    for (const auto& k : keys_) chunk.interned_keys.push_back(k->evaluate(rows));
  }
  // Values.
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Expr* e = inputs_[i];
    Vector v = e->evaluate(rows);
    ColumnView view;
    if (const TextRanks& ranks = text_ranks_[i]; ranks.order) {
      std::vector<int64_t>& ranked = chunk.int64s.emplace_back(v.count, 0);
      in.values.push_back(ColumnView{ColumnWidth::int64, text_ranks(v, ranks.dictionary, *ranks.order, ranked).data(),
                                     validity_of(v, chunk.bytes)});
      continue;
    }
    switch (physical_of(v.type.id)) {
      case Physical::floating: view.width = ColumnWidth::float64; break;
      case Physical::numeric: {
        std::vector<int64_t>& scaled = chunk.int64s.emplace_back(v.count);
        const int32_t scale = input_scale_checked_[i]
                                  ? one_numeric_scale(v, input_scales_[i], "a numeric aggregate input of varying scale")
                                  : input_scales_[i].load(std::memory_order_relaxed);
        // An evaluated expression can exceed the 18 digits an engine
        // input holds (map_aggregate takes it for its static scale).
        if (!numeric_as_int64(v, scale == kScaleUnknown ? 0 : scale, scaled.data())) {
          throw EngineInputOverflow(SqlState::feature_not_supported,
                                    "an aggregate input over 18 significant digits is not supported by Tally's engines");
        }
        view.width = ColumnWidth::int64;
        view.data = scaled.data();
        break;
      }
      case Physical::text:
      case Physical::interval:
        view.width = ColumnWidth::int64;  // count(x) reads validity only
        view.data = chunk.int64s.emplace_back(v.count, 0).data();
        break;
      default:
        if (spec_.value_widths[i] == ColumnWidth::int32) {
          // int2/int4/date/bool values fit
          view.width = ColumnWidth::int32;
          view.data = chunk.int32s.emplace_back(v.ints.begin(), v.ints.end()).data();
        } else {
          view.width = ColumnWidth::int64;
        }
        break;
    }
    view.validity = validity_of(v, chunk.bytes);
    if (view.data == nullptr) {
      // The vector's own array (float8, int8): kept with the chunk.
      chunk.evaluated.push_back(std::move(v));
      const Vector& kept = chunk.evaluated.back();
      view.data = view.width == ColumnWidth::float64 ? static_cast<const void*>(kept.floats.data())
                                                     : static_cast<const void*>(kept.ints.data());
    }
    in.values.push_back(view);
  }
  for (size_t a = 0; a < aggregates_.size(); ++a) {
    if (!aggregates_[a].filter) {
      in.filters.push_back(nullptr);
      continue;
    }
    const Vector f = aggregates_[a].filter->evaluate(rows);
    std::vector<uint8_t>& mask = chunk.bytes.emplace_back(rows.rows);
    for (size_t r = 0; r < rows.rows; ++r) mask[r] = (!f.null_at(r) && f.ints[r]) ? 1 : 0;
    const PartialAggregate& p = spec_.aggregates[a];
    if (!on_gpu_ || p.op == PartialOp::ordered_values || p.op == PartialOp::count_distinct || p.input < 0) {
      in.filters.push_back(mask.data());
      continue;
    }
    // The GPU engine takes no FILTER mask: an aggregate ignores a NULL
    // input as it ignores a filtered-out row, and every aggregate has
    // inputs of its own, so the mask becomes its inputs' validity
    // (choose_engine left only aggregates with an input on the GPU).
    for (const int i : {p.input, p.input2}) {
      if (i < 0) continue;
      ColumnView& view = in.values[static_cast<size_t>(i)];
      std::vector<uint8_t>& folded = chunk.bytes.emplace_back(mask);
      if (view.validity != nullptr) {
        for (size_t r = 0; r < rows.rows; ++r) folded[r] &= view.validity[r];
      }
      view.validity = folded.data();
    }
    in.filters.push_back(nullptr);
  }
  return work;
}

void EngineAggregator::sink_prepared(PreparedWork* work, const EvalInput& rows) {
  if (work == nullptr) {
    sink(rows);
    return;
  }
  EngineChunk& chunk = static_cast<EngineChunk&>(*work);
  if (chunk.coded_key.coded()) {
    // The codes index one dictionary for the whole run: the first coded
    // chunk's (every chunk of a stored column shares it). Once rows were
    // interned, or with another dictionary, the chunk is interned too.
    if (!dictionary_ && !interned_) dictionary_ = chunk.coded_key.dictionary;
    if (interned_ || chunk.coded_key.dictionary != dictionary_) {
      chunk.interned_keys.push_back(std::move(chunk.coded_key));
    } else {
      coded_keys_ = true;
    }
  }
  if (!chunk.interned_keys.empty() && coded_keys_) {
    // Strings after coded chunks: their codes in the run's dictionary.
    const Vector& v = chunk.interned_keys[0];
    std::vector<int32_t>& codes = chunk.int32s.emplace_back(rows.rows, 0);
    for (size_t r = 0; r < rows.rows; ++r) {
      if (v.null_at(r)) continue;
      codes[r] = dictionary_->find(v.text_at(r));
      if (codes[r] < 0) throw Error(SqlState::internal_error, "a text key outside its column's dictionary");
    }
    chunk.in.keys = ColumnView{ColumnWidth::int32, codes.data(), validity_of(v, chunk.bytes)};
  } else if (!chunk.interned_keys.empty()) {
    // Codes in the order rows arrive, so that they are the same whichever
    // thread prepared a chunk.
    const std::vector<Vector>& values = chunk.interned_keys;
    chunk.keys.assign(rows.rows, 0);
    std::vector<Value> tuple(keys_.size());
    for (size_t r = 0; r < rows.rows; ++r) {
      uint64_t h = 0x9E37;
      for (size_t k = 0; k < keys_.size(); ++k) {
        tuple[k] = values[k].get(r);
        h = (h * 0x100000001b3ULL) ^ hash_value(tuple[k]);
      }
      chunk.keys[r] = interner_.code(tuple, h);
    }
    interned_ = true;
    chunk.in.keys = ColumnView{ColumnWidth::int64, chunk.keys.data(), nullptr};
  }
  run_->sink(chunk.in);
}

}  // namespace tally::executor::engine_aggregation
