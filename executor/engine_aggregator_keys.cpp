// EngineAggregator's packed keys: several bare integer-like or text columns
// become one int64 code per row (common/aggregate_engine.hpp: KeyPart) when
// their ranges from chunk statistics fit 63 bits. The plan is made here from
// statistics alone; the engines pack the rows where the data is, and
// finalize unpacks the groups' codes into the key columns.
#include <algorithm>

#include "common/error.hpp"
#include "executor/engine_aggregator.hpp"

namespace tally::executor::engine_aggregation {

namespace {

bool is_text(TypeId id) { return id == TypeId::text || id == TypeId::varchar || id == TypeId::bpchar; }

// Groups the estimate may assume at most before sampling is worth its reads
// (the single-column paths use the same bound).
constexpr uint64_t kSampleAboveGroups = uint64_t{1} << 16;

}  // namespace

bool EngineAggregator::plan_packed_key(const TableSnapshot* table) {
  if (table == nullptr || keys_.size() > kMaxPackedKeyParts) return false;
  std::vector<KeyPart> parts;
  std::vector<int> columns;
  uint32_t offset = 0;
  // Distinct tuples the statistics allow (saturating): the estimate when small.
  uint64_t tuples = 1;
  for (const auto& key : keys_) {
    const auto* col = dynamic_cast<const ColumnExpr*>(key.get());
    if (col == nullptr || !(is_intlike(key->type.id) || is_text(key->type.id))) return false;
    bool nulls = false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t c = 0; c < table->chunk_count(); ++c) {
      const ChunkColumnStats s = table->stats(c, col->index);
      if (!s.known) return false;  // no range: the tuple cannot be bounded
      nulls |= s.null_count > 0;
      if (s.max >= s.min) { lo = std::min(lo, s.min); hi = std::max(hi, s.max); }
    }
    KeyPart part;
    part.min = hi >= lo ? lo : 0;
    part.bits = hi >= lo ? key_part_bits(lo, hi) : 0;
    part.nullable = nulls;
    part.offset = offset;
    if (part.bits >= 64 || offset + part.field_bits() > 63) return false;
    offset += part.field_bits();
    const uint64_t values = (hi >= lo ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1 : 0) + (nulls ? 1 : 0);
    tuples = values != 0 && tuples > UINT64_MAX / values ? UINT64_MAX : tuples * std::max<uint64_t>(values, 1);
    parts.push_back(part);
    columns.push_back(col->index);
  }
  // The largest code: every field at its column's maximum.
  uint64_t key_max = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const KeyPart& part = parts[p];
    key_max |= part.nullable ? uint64_t{1} << (part.offset + part.bits) : 0;
    key_max |= ((uint64_t{1} << part.bits) - 1) << part.offset;
  }
  spec_.key_parts = std::move(parts);
  packed_columns_ = std::move(columns);
  part_dictionaries_.assign(keys_.size(), nullptr);
  spec_.key_width = ColumnWidth::int64;
  spec_.key_range_known = true;
  spec_.key_min = 0;
  spec_.key_max = static_cast<int64_t>(key_max);
  spec_.key_has_nulls = false;  // a NULL key column is a field, never the NULL key
  const uint64_t rows = table->row_count();
  spec_.estimated_groups = std::min(rows, tuples);
  if (spec_.estimated_groups > kSampleAboveGroups) estimate_packed_from_sample(*table);
  return true;
}

void EngineAggregator::estimate_packed_from_sample(const TableSnapshot& table) {
  const uint64_t total = table.row_count();
  if (total == 0) return;
  const uint64_t stride = std::max<uint64_t>(1, total / kSampleRows);
  std::vector<uint64_t> hashes, previous;
  for (size_t c = 0; c < table.chunk_count(); ++c) {
    auto batch = table.read_chunk(c, packed_columns_);
    auto code_at = [&](size_t r) {
      uint64_t code = 0;
      for (size_t p = 0; p < spec_.key_parts.size(); ++p) {
        const KeyPart& part = spec_.key_parts[p];
        const auto& col = batch->columns[p];
        if (col.is_null(r)) {
          code |= uint64_t{1} << (part.offset + part.bits);
        } else {
          const uint64_t field = static_cast<uint64_t>(stored_int_at(col, r)) - static_cast<uint64_t>(part.min);
          code |= (field & ((uint64_t{1} << part.bits) - 1)) << part.offset;
        }
      }
      return sample_hash(static_cast<int64_t>(code));
    };
    for (size_t r = 0; r < batch->rows; r += stride) {
      hashes.push_back(code_at(r));
      previous.push_back(r > 0 ? code_at(r - 1) : ~hashes.back());
    }
  }
  // The per-column sketches describe single columns, not the tuple.
  estimate_from_hashes(table, std::move(hashes), std::move(previous), /*use_sketches=*/false);
}

void EngineAggregator::load_dictionaries() {
  std::vector<int> missing;
  for (size_t k = 0; k < keys_.size(); ++k) {
    if (!is_text(keys_[k]->type.id) || part_dictionaries_[k]) continue;
    if (table_ != nullptr) part_dictionaries_[k] = table_->dictionary(packed_columns_[k]);
    if (!part_dictionaries_[k]) missing.push_back(packed_columns_[k]);
  }
  if (missing.empty() || table_ == nullptr || table_->chunk_count() == 0) return;
  // Every chunk of a column shares the column's dictionary: the first tells it.
  const auto batch = table_->read_chunk(0, missing);
  size_t m = 0;
  for (size_t k = 0; k < keys_.size(); ++k) {
    if (is_text(keys_[k]->type.id) && !part_dictionaries_[k]) part_dictionaries_[k] = batch->columns[m++].dictionary;
  }
}

void EngineAggregator::evaluated_key_columns(const EvalInput& rows, ChunkInput& in,
                                             std::vector<std::vector<int64_t>>& values,
                                             std::vector<std::vector<uint8_t>>& validity) {
  values.assign(keys_.size(), {});
  validity.assign(keys_.size(), {});
  for (size_t k = 0; k < keys_.size(); ++k) {
    const Vector v = keys_[k]->evaluate(rows);
    std::vector<int64_t>& out = values[k];
    if (is_text(v.type.id)) {
      // Strings of stored rows: their codes in the column's dictionary.
      load_dictionaries();
      const auto& dictionary = part_dictionaries_[k];
      out.assign(rows.rows, spec_.key_parts[k].min);
      for (size_t r = 0; r < rows.rows; ++r) {
        if (v.null_at(r)) continue;
        const int32_t code = dictionary ? dictionary->find(v.texts[r]) : -1;
        if (code < 0) throw Error(SqlState::internal_error, "group key text missing from its column's dictionary");
        out[r] = code;
      }
    } else {
      out.assign(v.ints.begin(), v.ints.end());
    }
    ColumnView view{ColumnWidth::int64, out.data(), nullptr};
    if (!v.nulls.empty()) {
      validity[k].resize(rows.rows);
      for (size_t r = 0; r < rows.rows; ++r) validity[k][r] = v.nulls[r] ? 0 : 1;
      view.validity = validity[k].data();
    }
    in.key_columns.push_back(view);
  }
  in.keys = ColumnView{ColumnWidth::int64, nullptr, nullptr};
}

void EngineAggregator::unpack_keys(const AggregationResult& result, size_t groups, std::vector<Vector>& columns) const {
  for (size_t k = 0; k < keys_.size(); ++k) {
    const KeyPart& part = spec_.key_parts[k];
    Vector v(keys_[k]->type);
    v.resize(groups);
    const uint64_t mask = (uint64_t{1} << part.bits) - 1;
    const bool text = is_text(v.type.id);
    if (text && groups > 0 && !part_dictionaries_[k])
      throw Error(SqlState::internal_error, "packed text key without its dictionary");
    for (size_t g = 0; g < groups && g < result.keys.size(); ++g) {
      const uint64_t code = static_cast<uint64_t>(result.keys[g]) >> part.offset;
      if (part.nullable && ((code >> part.bits) & 1) != 0) {
        v.set_null(g);
        continue;
      }
      const int64_t value = static_cast<int64_t>(static_cast<uint64_t>(part.min) + (code & mask));
      if (text) v.texts[g] = std::string(part_dictionaries_[k]->at(static_cast<int32_t>(value)));
      else v.ints[g] = value;
    }
    columns.push_back(std::move(v));
  }
}

}  // namespace tally::executor::engine_aggregation
