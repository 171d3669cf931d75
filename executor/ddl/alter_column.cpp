#include "executor/ddl/alter_column.hpp"

#include <algorithm>

#include "catalog/sequence_store.hpp"
#include "executor/ddl/column_definition.hpp"
#include "executor/ddl/key_constraints.hpp"
#include "executor/ddl/sequence_ddl.hpp"
#include "executor/ddl/session_sequences.hpp"
#include "executor/ddl/view_ddl.hpp"
#include "executor/dml/column_default.hpp"
#include "executor/types/type_io.hpp"
#include "storage/column_layout.hpp"

namespace tally::executor::ddl {
namespace {

// PostgreSQL's MaxHeapAttributeNumber.
constexpr size_t max_columns = 1600;

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(SqlState::feature_not_supported, "ALTER TABLE ... " + what + " is not supported by Tally");
}

// Storage keeps ADD and DROP COLUMN apart from a transaction block's chunk
// lists, which a ROLLBACK would have to put back with the old columns.
void outside_block(const StatementContext& ctx, const char* what) {
  if (ctx.transaction) unsupported(std::string(what) + " inside a transaction block");
}

Error contains_nulls(const std::string& column, const std::string& table) {
  return Error(SqlState::not_null_violation,
               "column \"" + column + "\" of relation \"" + table + "\" contains null values");
}

// The value rows stored before the column existed read: its default in
// storage form (text kinds: the text, interned by storage), none for NULL.
std::optional<std::string> missing_value(const StatementContext& ctx, const catalog::ColumnDef& column) {
  const ConstantValue value = dml::column_default(ctx, column);
  if (value.kind == ConstantValue::Kind::null) return std::nullopt;
  if (is_string_stored(column.type.id)) {
    std::string scratch;
    return std::string(types::stored_string(column.type.id, value.text, scratch));
  }
  std::string bytes(static_cast<size_t>(storage_width(column.type)), '\0');
  types::parse_text_value(column.type, value.text, bytes.data());
  return bytes;
}

}  // namespace

void add_column(const nlohmann::json& cmd, catalog::TableDef& def, const catalog::TableSnapshot& current,
                StatementContext& ctx) {
  outside_block(ctx, "ADD COLUMN");
  const auto& node = cmd.at("def").at("ColumnDef");
  const std::string name = node.value("colname", std::string());
  if (def.find_column(name) >= 0) {
    const std::string message = "column \"" + name + "\" of relation \"" + def.name + "\" already exists";
    if (!cmd.value("missing_ok", false)) throw Error(SqlState::duplicate_column, message);
    ctx.out.notice(Error(SqlState::duplicate_column, message + ", skipping", Severity::notice));
    return;
  }
  if (def.columns.size() >= max_columns) throw Error(SqlState::too_many_columns, "tables can have at most 1600 columns");
  ColumnDefinition column = column_definition(node, def.name, ctx);
  const bool has_rows = current.row_count() > 0;
  const size_t index = def.columns.size();
  def.pin_slots();
  column.column.slot = def.unused_slot();
  def.columns.push_back(std::move(column.column));
  catalog::ColumnDef& added = def.columns.back();
  if (column.owns_sequence) {
    // PostgreSQL numbers the existing rows from the new sequence: a rewrite.
    if (has_rows) unsupported("ADD COLUMN of a serial or identity column to a table with rows");
    create_owned_sequence(def, index, column.identity_options, ctx);
  } else if (!dml::nextval_sequence(added.default_expr).empty()) {
    if (has_rows) unsupported("ADD COLUMN with a nextval default to a table with rows");
  } else if (has_rows) {
    added.missing = missing_value(ctx, added);
  }
  if (has_rows && added.not_null && !added.missing) throw contains_nulls(name, def.name);
  for (const nlohmann::json* key : column.keys) {
    const size_t k = add_key_constraint(def, *key, static_cast<int>(index), ctx);
    if (!has_rows) continue;
    if (def.keys[k].primary && !def.columns[index].missing) throw contains_nulls(name, def.name);
    // Every stored row has the one missing value: two rows are a duplicate.
    if (def.columns[index].missing && current.row_count() > 1)
      throw std::move(Error(SqlState::unique_violation, "could not create unique index \"" + def.keys[k].name + "\"")
                          .with_detail("Key (" + name + ")=(" + dml::column_default(ctx, def.columns[index]).text +
                                       ") is duplicated."));
  }
}

void add_identity(const nlohmann::json& cmd, catalog::TableDef& def, StatementContext& ctx) {
  const std::string name = cmd.value("name", std::string());
  const int found = def.find_column(name);
  if (found < 0)
    throw Error(SqlState::undefined_column, "column \"" + name + "\" of relation \"" + def.name + "\" does not exist");
  const size_t index = static_cast<size_t>(found);
  catalog::ColumnDef& column = def.columns[index];
  const std::string which = "column \"" + name + "\" of relation \"" + def.name + "\"";
  if (column.type.id != TypeId::int2 && column.type.id != TypeId::int4 && column.type.id != TypeId::int8)
    throw Error(SqlState::invalid_parameter_value, "identity column type must be smallint, integer, or bigint");
  if (!column.not_null)
    throw Error(SqlState::object_not_in_prerequisite_state, which + " must be declared NOT NULL before identity can be added");
  if (column.identity) throw Error(SqlState::object_not_in_prerequisite_state, which + " is already an identity column");
  if (!column.default_expr.empty())
    throw Error(SqlState::object_not_in_prerequisite_state, which + " already has a default value");
  const auto& constraint = cmd.at("def").at("Constraint");
  create_owned_sequence(def, index, constraint.contains("options") ? &constraint["options"] : nullptr, ctx);
  def.columns[index].identity = constraint.value("generated_when", std::string("a"))[0];
}

void drop_column(const nlohmann::json& cmd, catalog::TableDef& def, StatementContext& ctx, AfterCommit& after) {
  outside_block(ctx, "DROP COLUMN");
  const std::string name = cmd.value("name", std::string());
  const int found = def.find_column(name);
  if (found < 0) {
    const std::string message = "column \"" + name + "\" of relation \"" + def.name + "\" does not exist";
    if (!cmd.value("missing_ok", false)) throw Error(SqlState::undefined_column, message);
    ctx.out.notice(Error(SqlState::successful_completion, message + ", skipping", Severity::notice));
    return;
  }
  // Tally's chunks always hold at least one column.
  if (def.columns.size() == 1) unsupported("DROP COLUMN of a table's only column");
  const bool cascade = cmd.value("behavior", std::string()) == "DROP_CASCADE";
  auto views = column_dependents(def, name, cascade, ctx);
  if (!views.empty()) after.push_back([views, &ctx] { drop_with_notice(views, ctx); });
  // PostgreSQL drops the keys and indexes over the column with it.
  std::erase_if(def.keys, [&](const catalog::KeyConstraint& k) {
    return std::find(k.columns.begin(), k.columns.end(), found) != k.columns.end();
  });
  for (auto& key : def.keys)
    for (int& c : key.columns) c -= c > found ? 1 : 0;
  // And the sequence the column owns; the columns after it move down.
  if (ctx.sequences) {
    auto& store = ctx.sequences->store();
    for (const auto& seq : store.list()) {
      if (seq.owner_table != def.oid || seq.owner_column < found) continue;
      const uint32_t oid = seq.oid;
      const int column = seq.owner_column;
      after.push_back([&store, oid, column, found] {
        if (column == found) store.drop(oid);
        else store.set_owner_column(oid, column - 1);
      });
    }
  }
  def.pin_slots();
  def.columns.erase(def.columns.begin() + found);
}

}  // namespace tally::executor::ddl
