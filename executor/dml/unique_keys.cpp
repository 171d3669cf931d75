#include "executor/dml/unique_keys.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>

#include "common/error.hpp"
#include "executor/dml/key_value_set.hpp"
#include "executor/types/type_io.hpp"
#include "storage/numeric_slot.hpp"

namespace tally::executor::dml {
namespace {

// One key's value of one row as bytes that are equal exactly when
// PostgreSQL's equality says the values are (false: a NULL in the key, which
// never conflicts).
bool encode_key(const catalog::KeyConstraint& key, const std::vector<const storage::ColumnVector*>& columns,
                size_t row, std::string& out) {
  out.clear();
  for (const int c : key.columns) {
    const storage::ColumnVector& col = *columns[static_cast<size_t>(c)];
    if (col.is_null(row)) return false;
    const size_t width = static_cast<size_t>(storage_width(col.type));
    const uint8_t* slot = col.data.data() + row * width;
    if (col.type.id == TypeId::numeric && col.type.typmod < 4) {
      // Unconstrained numeric keeps each value's display scale: 1.0 = 1.00.
      storage::StoredNumeric n = storage::load_numeric(col.type, slot);
      while (n.scale > 0 && n.mantissa % 10 == 0) {
        n.mantissa /= 10;
        --n.scale;
      }
      out.append(reinterpret_cast<const char*>(&n.mantissa), sizeof n.mantissa);
      out.append(reinterpret_cast<const char*>(&n.scale), sizeof n.scale);
    } else if (col.type.id == TypeId::float8 || col.type.id == TypeId::float4) {
      // -0 = 0 (NaN = NaN in PostgreSQL too, and its bytes are one value here).
      double v = 0;
      if (col.type.id == TypeId::float8) {
        std::memcpy(&v, slot, sizeof v);
      } else {
        float f;
        std::memcpy(&f, slot, sizeof f);
        v = f;
      }
      if (v == 0) v = 0;
      out.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else {
      out.append(reinterpret_cast<const char*>(slot), width);
    }
  }
  return true;
}

// "(a, b)=(1, x)" for the detail of a 23505.
std::string describe_key(const catalog::TableDef& def, const catalog::KeyConstraint& key,
                         const std::vector<const storage::ColumnVector*>& columns,
                         const std::vector<const storage::StringDictionary*>& dictionaries, size_t row) {
  std::string names, values;
  for (const int c : key.columns) {
    const auto index = static_cast<size_t>(c);
    names += (names.empty() ? "" : ", ") + def.columns[index].name;
    if (!values.empty()) values += ", ";
    const storage::ColumnVector& col = *columns[index];
    const uint8_t* slot = col.data.data() + row * static_cast<size_t>(storage_width(col.type));
    if (is_string_stored(col.type.id)) {
      int32_t code;
      std::memcpy(&code, slot, sizeof code);
      if (dictionaries[index]) types::append_stored_string(values, col.type.id, dictionaries[index]->at(code));
      else values += std::to_string(code);
    } else {
      types::append_text_value(values, col.type, slot);
    }
  }
  return "(" + names + ")=(" + values + ")";
}

// The table's committed rows in one set per unique key; `duplicate`, when
// given, is called for a value already in its set (and the scan stops).
using DuplicateHandler = std::function<void(size_t key, const std::vector<const storage::ColumnVector*>&,
                                            const std::vector<const storage::StringDictionary*>&, size_t row)>;
std::vector<KeyValueSet> build_sets(storage::TableStore& store, const catalog::TableSnapshot& snapshot,
                               const std::vector<catalog::KeyConstraint>& keys, const DuplicateHandler& duplicate) {
  const auto rows = static_cast<size_t>(snapshot.row_count());
  std::vector<KeyValueSet> sets(keys.size(), KeyValueSet(rows));
  std::vector<int> wanted;
  for (const auto& key : keys)
    for (const int c : key.columns)
      if (std::find(wanted.begin(), wanted.end(), c) == wanted.end()) wanted.push_back(c);
  const size_t ncols = snapshot.def.columns.size();
  std::string encoded;
  for (size_t chunk = 0; chunk < snapshot.chunks.size(); ++chunk) {
    const auto batch = store.read_chunk(snapshot, chunk, wanted);
    // Table-column-indexed views of the columns read (others unused).
    std::vector<const storage::ColumnVector*> columns(ncols, nullptr);
    std::vector<const storage::StringDictionary*> dictionaries(ncols, nullptr);
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto c = static_cast<size_t>(wanted[i]);
      columns[c] = &batch->columns[i];
      dictionaries[c] = batch->columns[i].dictionary.get();
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      for (size_t row = 0; row < batch->rows; ++row) {
        if (!encode_key(keys[k], columns, row, encoded)) continue;
        if (!sets[k].insert(encoded) && duplicate) duplicate(k, columns, dictionaries, row);
      }
    }
  }
  return sets;
}

std::vector<catalog::KeyConstraint> unique_keys(const catalog::TableDef& def) {
  std::vector<catalog::KeyConstraint> keys;
  for (const auto& key : def.keys)
    if (key.unique) keys.push_back(key);
  return keys;
}

// Sets handed from a committed autocommit append to the next one.
struct KeyCache {
  struct Entry {
    uint64_t version = 0;
    std::vector<KeyValueSet> sets;
  };
  std::mutex mutex;
  std::map<uint32_t, Entry> entries;
};

class UniqueKeyCheck final : public storage::AppendCheck {
 public:
  UniqueKeyCheck(std::shared_ptr<KeyCache> cache, std::shared_ptr<const catalog::TableSnapshot> base,
                 std::vector<catalog::KeyConstraint> keys, std::vector<KeyValueSet> sets, bool cacheable)
      : cache_(std::move(cache)), base_(std::move(base)), keys_(std::move(keys)), sets_(std::move(sets)),
        cacheable_(cacheable) {}

  void check(const std::vector<const storage::ColumnVector*>& columns,
             const std::vector<const storage::StringDictionary*>& dictionaries, size_t first, size_t count) override {
    std::string encoded;
    for (size_t k = 0; k < keys_.size(); ++k) {
      for (size_t row = first; row < first + count; ++row) {
        if (!encode_key(keys_[k], columns, row, encoded)) continue;
        if (sets_[k].insert(encoded)) continue;
        cacheable_ = false;  // the set now holds keys of rows never committed
        throw std::move(Error(SqlState::unique_violation,
                              "duplicate key value violates unique constraint \"" + keys_[k].name + "\"")
                            .with_detail("Key " + describe_key(base_->def, keys_[k], columns, dictionaries, row) +
                                         " already exists."));
      }
    }
  }

  void committed(const catalog::TableSnapshot& after) override {
    if (!cacheable_) return;
    std::lock_guard lock(cache_->mutex);
    cache_->entries[after.def.oid] = {after.version, std::move(sets_)};
  }

 private:
  std::shared_ptr<KeyCache> cache_;
  std::shared_ptr<const catalog::TableSnapshot> base_;
  std::vector<catalog::KeyConstraint> keys_;
  std::vector<KeyValueSet> sets_;
  bool cacheable_;
};

}  // namespace

void install_unique_key_checks(storage::TableStore& store) {
  auto cache = std::make_shared<KeyCache>();
  store.set_append_check([cache](storage::TableStore& s, const std::shared_ptr<const catalog::TableSnapshot>& base,
                                 bool replacing, bool in_block) -> std::unique_ptr<storage::AppendCheck> {
    auto keys = unique_keys(base->def);
    if (keys.empty()) return nullptr;
    std::vector<KeyValueSet> sets;
    bool found = false;
    {
      // Taken out while this append runs (it holds the table's write lock):
      // whatever happens to it, the entry no longer matches a committed state.
      std::lock_guard lock(cache->mutex);
      auto it = cache->entries.find(base->def.oid);
      if (it != cache->entries.end()) {
        found = !in_block && !replacing && it->second.version == base->version && it->second.sets.size() == keys.size();
        if (found) sets = std::move(it->second.sets);
        cache->entries.erase(it);
      }
    }
    if (replacing) {
      sets.assign(keys.size(), KeyValueSet{});
    } else if (!found) {
      sets = build_sets(s, *base, keys, nullptr);
    }
    return std::make_unique<UniqueKeyCheck>(cache, base, std::move(keys), std::move(sets), !in_block);
  });
}

void check_existing_rows_unique(storage::TableStore& store, const catalog::TableSnapshot& snapshot,
                                const catalog::KeyConstraint& key) {
  build_sets(store, snapshot, {key}, [&](size_t, const std::vector<const storage::ColumnVector*>& columns,
                                         const std::vector<const storage::StringDictionary*>& dictionaries, size_t row) {
    throw std::move(Error(SqlState::unique_violation, "could not create unique index \"" + key.name + "\"")
                        .with_detail("Key " + describe_key(snapshot.def, key, columns, dictionaries, row) +
                                     " is duplicated."));
  });
}

}  // namespace tally::executor::dml
