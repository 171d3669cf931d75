#include "executor/dml/on_conflict.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "executor/types/type_io.hpp"
#include "storage/column_layout.hpp"
#include "storage/table_store.hpp"

namespace tally::executor::dml {
namespace {

// One value of a key, length-prefixed so that a tuple of them is unambiguous.
void append_part(std::string& key, std::string_view bytes) {
  const auto n = static_cast<uint32_t>(bytes.size());
  key.append(reinterpret_cast<const char*>(&n), sizeof n);
  key.append(bytes);
}

// The arbiters' columns: the key ON CONSTRAINT names, the keys whose
// columns are the target's (as a set, like PostgreSQL's inference), or every
// unique key when there is no target (DO NOTHING only).
std::vector<std::vector<int>> arbiters(const nlohmann::json& clause, const catalog::TableDef& def) {
  std::vector<std::vector<int>> out;
  const nlohmann::json* infer = clause.contains("infer") ? &clause["infer"] : nullptr;
  if (infer && infer->contains("conname")) {
    const std::string name = infer->value("conname", std::string());
    for (const auto& key : def.keys)
      if (key.constraint && key.name == name) return {key.columns};
    throw Error(SqlState::undefined_object,
                "constraint \"" + name + "\" for table \"" + def.name + "\" does not exist");
  }
  if (infer && infer->contains("whereClause"))
    throw Error(SqlState::feature_not_supported, "ON CONFLICT with a partial index predicate is not supported by Tally");
  if (!infer || !infer->contains("indexElems")) {
    for (const auto& key : def.keys)
      if (key.unique) out.push_back(key.columns);
    return out;
  }
  std::set<int> target;
  for (const auto& elem : (*infer)["indexElems"]) {
    const auto& e = elem.at("IndexElem");
    if (!e.contains("name"))
      throw Error(SqlState::feature_not_supported, "ON CONFLICT on an expression is not supported by Tally");
    const std::string name = e.value("name", std::string());
    const int column = def.find_column(name);
    if (column < 0) throw Error(SqlState::undefined_column, "column \"" + name + "\" does not exist");
    target.insert(column);
  }
  for (const auto& key : def.keys) {
    if (key.unique && std::set<int>(key.columns.begin(), key.columns.end()) == target) out.push_back(key.columns);
  }
  if (out.empty())
    throw Error(SqlState::invalid_column_reference,
                "there is no unique or exclusion constraint matching the ON CONFLICT specification");
  return out;
}

}  // namespace

ConflictCheck::ConflictCheck(const nlohmann::json& clause, const catalog::TableSnapshot& snapshot, StatementContext& ctx)
    : def_(snapshot.def), do_update_(clause.value("action", std::string()) == "ONCONFLICT_UPDATE") {
  if (do_update_ && (!clause.contains("infer") ||
                     (!clause["infer"].contains("indexElems") && !clause["infer"].contains("conname"))))
    throw std::move(
        Error(SqlState::syntax_error, "ON CONFLICT DO UPDATE requires inference specification or constraint name")
            .with_hint("For example, ON CONFLICT (column_name)."));
  keys_ = arbiters(clause, def_);
  if (do_update_) update_key_ = keys_.front();
  stored_.resize(keys_.size());
  proposed_.resize(keys_.size());
  for (size_t chunk = 0; chunk < snapshot.chunks.size(); ++chunk) {
    ctx.check_cancel();
    for (size_t k = 0; k < keys_.size(); ++k) {
      const auto batch = ctx.store.read_chunk(snapshot, chunk, keys_[k]);
      for (size_t row = 0; row < batch->rows; ++row) {
        std::string key;
        bool null = false;
        for (const auto& column : batch->columns) {
          if ((null = column.is_null(row))) break;
          if (column.dictionary) {
            append_part(key, column.dictionary->at(column.values<int32_t>()[row]));
          } else {
            const auto width = static_cast<size_t>(storage_width(column.type));
            append_part(key, std::string_view(reinterpret_cast<const char*>(column.data.data()) + row * width, width));
          }
        }
        if (!null) stored_[k].insert(std::move(key));
      }
    }
  }
}

std::optional<std::string> ConflictCheck::key_of(const ProposedRow& row, size_t k) const {
  std::string key;
  for (const int c : keys_[k]) {
    const auto& value = row[static_cast<size_t>(c)];
    if (!value) return std::nullopt;  // NULLs never conflict
    const SqlType type = def_.columns[static_cast<size_t>(c)].type;
    if (is_string_stored(type.id)) {
      std::string scratch;
      append_part(key, types::stored_string(type.id, *value, scratch));
    } else {
      std::string bytes(static_cast<size_t>(storage_width(type)), '\0');
      types::parse_text_value(type, *value, bytes.data());
      append_part(key, bytes);
    }
  }
  return key;
}

bool ConflictCheck::matches(const ProposedRow& row, const std::vector<std::unordered_set<std::string>>& sets) const {
  for (size_t k = 0; k < keys_.size(); ++k) {
    const auto key = key_of(row, k);
    if (key && sets[k].count(*key)) return true;
  }
  return false;
}

void ConflictCheck::take(const ProposedRow& row) {
  for (size_t k = 0; k < keys_.size(); ++k)
    if (auto key = key_of(row, k)) proposed_[k].insert(std::move(*key));
}

}  // namespace tally::executor::dml
