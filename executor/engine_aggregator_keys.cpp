// EngineAggregator's packed keys: several bare integer-like or text columns
// become one int64 code per row (common/aggregate_engine.hpp: KeyPart) when
// their ranges from chunk statistics fit 63 bits, else a key tuple the
// engine groups by (AggregationSpec::key_tuple). The plan is made here from
// statistics alone; the engines pack the rows where the data is, and
// finalize unpacks the groups' codes into the key columns.
#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/finalize.hpp"
#include "executor/numeric_vector.hpp"

namespace tally::executor::engine_aggregation {

namespace {

bool is_text(TypeId id) { return id == TypeId::text || id == TypeId::varchar || id == TypeId::bpchar; }

// Groups the estimate may assume at most before sampling is worth its reads
// (the single-column paths use the same bound).
constexpr uint64_t kSampleAboveGroups = uint64_t{1} << 16;

// Parts of a pass over a result's groups: one per 64k groups, at most one
// per core (the pool's workers and the caller), so a small result stays on
// the caller's thread.
int result_threads(size_t groups) {
  constexpr size_t groups_per_part = size_t{1} << 16;
  const size_t by_size = std::max<size_t>(1, groups / groups_per_part);
  return static_cast<int>(std::min<size_t>(by_size, static_cast<size_t>(cpu::WorkerPool::shared().workers()) + 1));
}

}  // namespace

KeyMode EngineAggregator::plan_key_columns(const TableSnapshot* table) {
  if (table == nullptr || keys_.size() > kMaxPackedKeyParts) return KeyMode::interned;
  std::vector<KeyPart> parts;
  std::vector<int> columns;
  uint32_t offset = 0;
  bool fits = true;  // every range known and the fields within 63 bits
  // Distinct tuples the statistics allow (saturating): the estimate when small.
  uint64_t tuples = 1;
  for (const auto& key : keys_) {
    const auto* col = dynamic_cast<const ColumnExpr*>(key.get());
    if (col == nullptr || !(is_intlike(key->type.id) || is_text(key->type.id))) return KeyMode::interned;
    bool nulls = false, known = true;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t c = 0; c < table->chunk_count() && known; ++c) {
      const ChunkColumnStats s = table->stats(c, col->index);
      known = s.known;
      nulls |= s.null_count > 0;
      if (s.max >= s.min) { lo = std::min(lo, s.min); hi = std::max(hi, s.max); }
    }
    KeyPart part;
    part.min = known && hi >= lo ? lo : 0;
    part.nullable = nulls || !known;  // no statistics: a key tuple that may hold NULLs
    part.bits = known ? key_part_bits(lo, hi, part.nullable) : 0;
    part.offset = offset;
    part.narrow = is_text(key->type.id);  // a tuple's text values are codes: 32 bits
    fits = fits && known && part.bits < 64 && offset + part.bits <= 63;
    offset += part.bits;
    const uint64_t values = (hi >= lo ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1 : 0) + (nulls ? 1 : 0);
    tuples = !known || (values != 0 && tuples > UINT64_MAX / values) ? UINT64_MAX
                                                                      : tuples * std::max<uint64_t>(values, 1);
    parts.push_back(part);
    columns.push_back(col->index);
  }
  spec_.key_tuple = !fits;
  // The largest code: every field at its column's maximum.
  uint64_t key_max = 0;
  for (size_t p = 0; p < parts.size() && fits; ++p) key_max |= parts[p].mask() << parts[p].offset;
  spec_.key_parts = std::move(parts);
  packed_columns_ = std::move(columns);
  part_dictionaries_.assign(keys_.size(), nullptr);
  spec_.key_width = ColumnWidth::int64;
  // A key tuple's ids have no range known before the rows are seen.
  spec_.key_range_known = fits;
  spec_.key_min = 0;
  spec_.key_max = fits ? static_cast<int64_t>(key_max) : 0;
  spec_.key_has_nulls = false;  // a NULL key column is a field (or a tuple value), never the NULL key
  const uint64_t rows = table->row_count();
  spec_.estimated_groups = std::min(rows, tuples);
  if (spec_.estimated_groups > kSampleAboveGroups) estimate_packed_from_sample(*table);
  return fits ? KeyMode::packed : KeyMode::tuple;
}

KeyMode EngineAggregator::plan_evaluated_tuple() {
  if (keys_.empty() || keys_.size() > kMaxPackedKeyParts) return KeyMode::interned;
  for (const auto& key : keys_) {
    const TypeId id = key->type.id;
    if (!is_intlike(id) && !is_text(id) && id != TypeId::numeric) return KeyMode::interned;
  }
  // A numeric key groups as scaled integers only while every value has the
  // same scale: each value then prints as PostgreSQL prints its group's.
  numeric_scales_ = std::vector<std::atomic<int32_t>>(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) {
    const bool numeric = keys_[k]->type.id == TypeId::numeric;
    numeric_scales_[k] = numeric ? static_numeric_scale(*keys_[k]).value_or(kScaleUnknown) : 0;
  }
  text_codes_.clear();
  for (const auto& key : keys_) text_codes_.push_back(is_text(key->type.id) ? std::make_unique<TextKeyCodes>() : nullptr);
  KeyPart part;
  part.nullable = true;
  spec_.key_parts.assign(keys_.size(), part);
  for (size_t k = 0; k < keys_.size(); ++k) spec_.key_parts[k].narrow = is_text(keys_[k]->type.id);
  spec_.key_tuple = true;
  spec_.key_width = ColumnWidth::int64;
  spec_.key_range_known = false;
  spec_.key_min = spec_.key_max = 0;
  spec_.key_has_nulls = false;  // a NULL key column is a tuple value, never the NULL key
  part_dictionaries_.assign(keys_.size(), nullptr);
  return KeyMode::evaluated_tuple;
}

void EngineAggregator::estimate_packed_from_sample(const TableSnapshot& table) {
  const uint64_t total = table.row_count();
  if (total == 0) return;
  // Tuples and packed codes of the same columns count the same groups.
  if (take_kept_estimate(table, packed_columns_)) return;
  const uint64_t stride = std::max<uint64_t>(1, total / kSampleRows);
  std::vector<uint64_t> hashes, previous;
  sample_hashes(table, packed_columns_, stride, [&](const storage::ChunkBatch& batch, size_t r) {
    uint64_t code = 0;
    for (size_t p = 0; p < spec_.key_parts.size(); ++p) {
      const KeyPart& part = spec_.key_parts[p];
      const auto& col = batch.columns[p];
      if (spec_.key_tuple) {
        // A tuple's values, combined (a NULL as a value no column holds
        // in the same place: the hash of a tuple, not a code).
        const uint64_t v = col.is_null(r) ? 0x6e756c6cULL + p : static_cast<uint64_t>(stored_int_at(col, r));
        code = sample_hash(static_cast<int64_t>(code ^ v)) + p;
      } else if (col.is_null(r)) {
        code |= part.mask() << part.offset;
      } else {
        const uint64_t field = static_cast<uint64_t>(stored_int_at(col, r)) - static_cast<uint64_t>(part.min);
        code |= (field & part.mask()) << part.offset;
      }
    }
    return sample_hash(static_cast<int64_t>(code));
  }, hashes, previous);
  // The per-column sketches describe single columns, not the tuple.
  estimate_from_hashes(table, std::move(hashes), std::move(previous), /*use_sketches=*/false, packed_columns_);
}

void EngineAggregator::load_dictionaries() const {
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

int32_t EngineAggregator::one_numeric_scale(const Vector& v, std::atomic<int32_t>& decided, const char* what) {
  int32_t scale = decided.load(std::memory_order_relaxed);
  for (size_t r = 0; r < v.count; ++r) {
    if (v.null_at(r)) continue;
    if (scale == kScaleUnknown) {
      // The first value seen, by whichever thread, decides.
      decided.compare_exchange_strong(scale, v.numerics[r].scale);
      scale = decided.load();
    }
    if (v.numerics[r].scale != scale) throw EngineInputOverflow(SqlState::feature_not_supported, what);
  }
  return scale;
}

void EngineAggregator::evaluated_key_columns(const EvalInput& rows, ChunkInput& in,
                                             std::vector<std::vector<int64_t>>& values,
                                             std::vector<std::vector<uint8_t>>& validity) const {
  values.assign(keys_.size(), {});
  validity.assign(keys_.size(), {});
  for (size_t k = 0; k < keys_.size(); ++k) {
    const Vector v = keys_[k]->evaluate(rows);
    std::vector<int64_t>& out = values[k];
    if (mode_ == KeyMode::evaluated_tuple && text_codes_[k]) {
      out.assign(rows.rows, 0);
      text_codes_[k]->code(v, out.data());
    } else if (mode_ == KeyMode::evaluated_tuple && v.type.id == TypeId::numeric) {
      out.assign(rows.rows, 0);
      const int32_t scale = one_numeric_scale(v, numeric_scales_[k], "a numeric group key of varying scale");
      if (!numeric_as_int64(v, scale, out.data())) {
        throw EngineInputOverflow(SqlState::feature_not_supported, "a numeric group key over 18 significant digits");
      }
    } else if (is_text(v.type.id)) {
      // Strings of stored rows: their codes in the column's dictionary.
      std::call_once(dictionaries_loaded_, [this] { load_dictionaries(); });
      const auto& dictionary = part_dictionaries_[k];
      out.assign(rows.rows, spec_.key_parts[k].min);
      const bool own_codes = v.coded() && v.dictionary == dictionary;  // a scan's text: codes as they are
      for (size_t r = 0; r < rows.rows; ++r) {
        if (v.null_at(r)) continue;
        const int32_t code = own_codes ? v.codes[r] : (dictionary ? dictionary->find(v.text_at(r)) : -1);
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
  const size_t n = std::min(groups, result.keys.size());  // groups past the codes (none in practice) hold 0
  const int64_t* keys = result.keys.data();
  std::vector<uint8_t> nullable(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) nullable[k] = spec_.key_parts[k].nullable ? 1 : 0;
  key_columns(groups, nullable, columns, [&](size_t k, size_t begin, size_t end, const KeyColumnOut& out) {
    const KeyPart& part = spec_.key_parts[k];
    const unsigned offset = part.offset;
    const uint64_t mask = part.mask(), min = static_cast<uint64_t>(part.min);
    end = std::min(end, n);
    if (!part.nullable) {
      if (out.codes != nullptr) {
        for (size_t g = begin; g < end; ++g)
          out.codes[g] = static_cast<int32_t>(min + ((static_cast<uint64_t>(keys[g]) >> offset) & mask));
      } else if (out.ints != nullptr) {
        for (size_t g = begin; g < end; ++g)
          out.ints[g] = static_cast<int64_t>(min + ((static_cast<uint64_t>(keys[g]) >> offset) & mask));
      }
      return;
    }
    for (size_t g = begin; g < end; ++g) {
      const uint64_t field = (static_cast<uint64_t>(keys[g]) >> offset) & mask;
      const bool null = field == mask;
      const uint64_t value = null ? 0 : min + field;
      out.nulls[g] = null ? 1 : 0;
      if (out.codes != nullptr) out.codes[g] = static_cast<int32_t>(value);
      else if (out.ints != nullptr) out.ints[g] = static_cast<int64_t>(value);
    }
  });
}

void EngineAggregator::tuple_keys(AggregationResult& result, size_t groups, std::vector<Vector>& columns) const {
  if (mode_ == KeyMode::evaluated_tuple) {
    // Each text key's codes index the dictionary its TextKeyCodes ends with
    // (an empty one when every value was NULL).
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (!text_codes_[k]) continue;
      auto dictionary = text_codes_[k]->dictionary();
      part_dictionaries_[k] = dictionary ? std::move(dictionary) : std::make_shared<storage::StringDictionary>();
    }
  }
  std::vector<uint8_t> may_be_null(keys_.size(), 1), as_is(keys_.size(), 0);
  std::vector<std::vector<int64_t>*> take(keys_.size(), nullptr);
  std::vector<std::vector<int32_t>*> take_codes(keys_.size(), nullptr);
  std::vector<const int64_t*> values(keys_.size(), nullptr);
  std::vector<const int32_t*> values32(keys_.size(), nullptr);  // a column the engine returned narrow
  if (groups > 0) {  // an engine that saw no row may return no values at all
    if (result.key_codes.size() != keys_.size() || result.key_code_valid.size() != keys_.size())
      throw Error(SqlState::internal_error, "an engine's result lacks the key tuple's values");
    for (size_t k = 0; k < keys_.size(); ++k) {
      const std::vector<uint8_t>& valid = result.key_code_valid[k];
      const bool narrow = k < result.key_codes32.size() && !result.key_codes32[k].empty();
      const size_t have = narrow ? result.key_codes32[k].size() : result.key_codes[k].size();
      if (have < groups || (!valid.empty() && valid.size() < groups))
        throw Error(SqlState::internal_error, "an engine's result lacks group values of a key tuple");
      // The same array once taken.
      if (narrow) values32[k] = result.key_codes32[k].data();
      else values[k] = result.key_codes[k].data();
      // Without a NULL group the column needs no NULL flags (at 1e8 groups,
      // a fresh array of 100 MB per key).
      if (valid.empty() || std::memchr(valid.data(), 0, groups) == nullptr) may_be_null[k] = 0;
      if (narrow) {
        // A text key's codes (KeyPart::narrow) as the engine returned them:
        // the column takes the array.
        take_codes[k] = &result.key_codes32[k];
        if (may_be_null[k] == 0) as_is[k] = 1;
        continue;
      }
      if (is_text(keys_[k]->type.id) || keys_[k]->type.id == TypeId::numeric) continue;
      // An integer key's values are the column's: the column takes the
      // engine's array, and without a NULL group uses it as it is.
      take[k] = &result.key_codes[k];
      if (may_be_null[k] == 0) as_is[k] = 1;
    }
  }
  key_columns(
      groups, may_be_null, columns,
      [&](size_t k, size_t begin, size_t end, const KeyColumnOut& out) {
        if (as_is[k] != 0) return;
        const int64_t* from = values[k];
        const int32_t* from32 = values32[k];
        const uint8_t* valid = result.key_code_valid[k].empty() ? nullptr : result.key_code_valid[k].data();
        for (size_t g = begin; g < end; ++g) {
          const bool present = valid == nullptr || valid[g] != 0;
          const int64_t value = !present ? 0 : from32 != nullptr ? from32[g] : from[g];
          if (out.nulls != nullptr) out.nulls[g] = present ? 0 : 1;
          if (out.codes != nullptr) out.codes[g] = static_cast<int32_t>(value);
          else if (out.ints != nullptr) out.ints[g] = value;
          else if (out.numerics != nullptr) out.numerics[g] = Numeric{value, numeric_scales_[k].load()};
        }
      },
      take, take_codes);
}

template <class FillBlock>
void EngineAggregator::key_columns(size_t groups, const std::vector<uint8_t>& may_be_null, std::vector<Vector>& columns,
                                   FillBlock&& fill_block, const std::vector<std::vector<int64_t>*>& take,
                                   const std::vector<std::vector<int32_t>*>& take_codes) const {
  const size_t first = columns.size();
  std::vector<KeyColumnOut> out(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) {
    Vector v(keys_[k]->type);
    const bool text = is_text(v.type.id);
    if (text && groups > 0 && !part_dictionaries_[k])
      throw Error(SqlState::internal_error, "a text key column without its dictionary");
    // A text part stays coded (value.hpp): no string per group. (Without
    // entries every group's part is NULL: nothing to code.)
    const bool coded = text && groups > 0 && part_dictionaries_[k]->size() > 0;
    if (coded) v.dictionary = part_dictionaries_[k];
    if (!text && k < take.size() && take[k] != nullptr) {
      v.ints = std::move(*take[k]);
      v.ints.resize(groups);
      v.count = groups;
    } else if (coded && k < take_codes.size() && take_codes[k] != nullptr) {
      v.codes = std::move(*take_codes[k]);
      v.codes.resize(groups);
      v.count = groups;
    } else {
      if (coded) cpu::resize_prefaulted(v.codes, groups);
      else if (!text && v.type.id != TypeId::numeric) cpu::resize_prefaulted(v.ints, groups);
      v.resize(groups);  // zeros: what a NULL group holds
    }
    if (may_be_null[k] != 0) cpu::resize_prefaulted(v.nulls, groups);
    const bool numeric = v.type.id == TypeId::numeric;
    out[k] = {text || numeric ? nullptr : v.ints.data(), coded ? v.codes.data() : nullptr,
              numeric ? v.numerics.data() : nullptr, may_be_null[k] != 0 ? v.nulls.data() : nullptr};
    columns.push_back(std::move(v));
  }
  // Each part writes its own groups of every column, a block of groups
  // at a time (the block's packed codes are read once, from cache): a
  // result of 1e8 groups unpacks on every core, not in a pass per key
  // column on the caller's thread.
  constexpr size_t block = 4096;
  cpu::parallel_for(result_threads(groups), groups, [&](int, size_t begin, size_t end) {
    for (size_t b = begin; b < end; b += block) {
      check_cancel_point();  // 1e8 groups take seconds: a cancel stops them
      const size_t e = std::min(end, b + block);
      for (size_t k = 0; k < out.size(); ++k) fill_block(k, b, e, out[k]);
    }
  });
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<uint8_t>& nulls = columns[first + k].nulls;
    if (!nulls.empty() && std::memchr(nulls.data(), 1, groups) == nullptr) nulls.clear();
  }
}

}  // namespace tally::executor::engine_aggregation
