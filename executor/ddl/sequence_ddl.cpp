#include "executor/ddl/sequence_ddl.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include "catalog/sequence_store.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/ddl/key_constraints.hpp"
#include "executor/ddl/session_sequences.hpp"
#include "executor/ddl/type_name.hpp"

namespace tally::executor::ddl {
namespace {

catalog::SequenceStore& store_of(const StatementContext& ctx) {
  if (!ctx.sequences) throw Error(SqlState::feature_not_supported, "sequences need the storage layer, which this build lacks");
  return ctx.sequences->store();
}

// An option's number: Integer, or Float for values past int32. The parse
// tree's JSON leaves a negative Integer's value out ({"Integer": {}}, the
// same as 0), so an Integer without one is read from the statement text at
// the option's location: the first signed number after its keywords.
int64_t option_int(const nlohmann::json& elem, const StatementContext& ctx) {
  const auto& arg = elem.at("arg");
  if (arg.contains("Integer") && arg["Integer"].contains("ival")) return arg["Integer"]["ival"].get<int64_t>();
  if (arg.contains("Integer")) {
    const int location = elem.value("location", -1);
    if (location < 0 || static_cast<size_t>(location) >= ctx.query_text.size()) return 0;
    size_t i = static_cast<size_t>(location);
    while (i < ctx.query_text.size() && !std::isdigit(static_cast<unsigned char>(ctx.query_text[i])) &&
           ctx.query_text[i] != '-')
      ++i;
    return std::strtoll(std::string(ctx.query_text.substr(i, 32)).c_str(), nullptr, 10);
  }
  if (arg.contains("Float")) return std::stoll(arg["Float"].value("fval", std::string("0")));
  throw Error(SqlState::syntax_error, "invalid value for sequence option \"" + elem.value("defname", std::string()) + "\"");
}

std::pair<int64_t, int64_t> type_range(TypeId type) {
  if (type == TypeId::int2) return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
  if (type == TypeId::int4) return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
}

// The options of CREATE SEQUENCE (or an identity column) applied to def,
// with PostgreSQL's defaults and checks (init_params in sequence.c).
void apply_options(catalog::SequenceDef& def, const nlohmann::json& options, StatementContext& ctx) {
  std::optional<int64_t> start, min, max;
  bool min_given = false, max_given = false;
  for (const auto& o : options) {
    const auto& elem = o.at("DefElem");
    const std::string name = elem.value("defname", std::string());
    if (name == "as") {
      const SqlType type = resolve_type_name(ctx, elem.at("arg").at("TypeName"));
      if (type.id != TypeId::int2 && type.id != TypeId::int4 && type.id != TypeId::int8)
        throw Error(SqlState::invalid_parameter_value, "sequence type must be smallint, integer, or bigint");
      def.type = type.id;
    } else if (name == "increment") {
      def.increment = option_int(elem, ctx);
      if (def.increment == 0) throw Error(SqlState::invalid_parameter_value, "INCREMENT must not be zero");
    } else if (name == "start") {
      start = option_int(elem, ctx);
    } else if (name == "minvalue") {
      min_given = true;
      if (elem.contains("arg")) min = option_int(elem, ctx);
    } else if (name == "maxvalue") {
      max_given = true;
      if (elem.contains("arg")) max = option_int(elem, ctx);
    } else if (name == "cache") {
      def.cache = option_int(elem, ctx);
      if (def.cache <= 0)
        throw Error(SqlState::invalid_parameter_value, "CACHE (" + std::to_string(def.cache) + ") must be greater than zero");
    } else if (name == "cycle") {
      def.cycle = elem.at("arg").contains("Boolean") ? elem["arg"]["Boolean"].value("boolval", false) : option_int(elem, ctx) != 0;
    } else if (name == "owned_by" || name == "sequence_name") {
      // OWNED BY NONE / a column: ownership only decides what DROP TABLE drops.
    } else {
      throw Error(SqlState::feature_not_supported, "sequence option \"" + name + "\" is not supported by Tally");
    }
  }
  (void)min_given;
  (void)max_given;
  const auto [type_min, type_max] = type_range(def.type);
  def.min = min.value_or(def.increment > 0 ? 1 : type_min);
  def.max = max.value_or(def.increment > 0 ? type_max : -1);
  if (def.min < type_min || def.max > type_max) {
    const bool low = def.min < type_min;
    throw Error(SqlState::invalid_parameter_value,
                std::string(low ? "MINVALUE" : "MAXVALUE") + " (" + std::to_string(low ? def.min : def.max) +
                    ") is out of range for sequence data type " + format_type(SqlType{def.type}));
  }
  if (def.min >= def.max)
    throw Error(SqlState::invalid_parameter_value, "MINVALUE (" + std::to_string(def.min) +
                                                       ") must be less than MAXVALUE (" + std::to_string(def.max) + ")");
  def.start = start.value_or(def.increment > 0 ? def.min : def.max);
  if (def.start < def.min)
    throw Error(SqlState::invalid_parameter_value, "START value (" + std::to_string(def.start) +
                                                       ") cannot be less than MINVALUE (" + std::to_string(def.min) + ")");
  if (def.start > def.max)
    throw Error(SqlState::invalid_parameter_value, "START value (" + std::to_string(def.start) +
                                                       ") cannot be greater than MAXVALUE (" + std::to_string(def.max) + ")");
}

}  // namespace

bool sequence_exists(const StatementContext& ctx, const std::string& name) {
  return ctx.sequences && ctx.sequences->store().find(name).has_value();
}

std::string create_sequence(const nlohmann::json& stmt, StatementContext& ctx) {
  const auto& rel = stmt.at("sequence");
  const std::string name = relation_name(rel);
  const std::string schema = rel.value("schemaname", std::string("public"));
  if (schema != "public") throw Error(SqlState::invalid_schema_name, "schema \"" + schema + "\" does not exist");
  if (rel.value("relpersistence", std::string("p")) != "p")
    throw Error(SqlState::feature_not_supported, "temporary and unlogged sequences are not supported by Tally");
  if (relation_name_taken(ctx, name, nullptr) || sequence_exists(ctx, name)) {
    if (stmt.value("if_not_exists", false)) {
      ctx.out.notice(Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists, skipping",
                           Severity::notice));
      return "CREATE SEQUENCE";
    }
    throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
  }
  catalog::SequenceDef def;
  def.name = name;
  apply_options(def, stmt.value("options", nlohmann::json::array()), ctx);
  store_of(ctx).create(std::move(def));
  return "CREATE SEQUENCE";
}

std::string alter_sequence(const nlohmann::json& stmt, StatementContext& ctx) {
  const std::string name = relation_name(stmt.at("sequence"));
  auto& store = store_of(ctx);
  auto def = store.find(name);
  if (!def) {
    if (stmt.value("missing_ok", false)) {
      ctx.out.notice(Error(SqlState::successful_completion, "relation \"" + name + "\" does not exist, skipping",
                           Severity::notice));
      return "ALTER SEQUENCE";
    }
    throw Error(SqlState::undefined_table, "relation \"" + name + "\" does not exist");
  }
  for (const auto& o : stmt.value("options", nlohmann::json::array())) {
    const auto& elem = o.at("DefElem");
    const std::string option = elem.value("defname", std::string());
    if (option == "owned_by") continue;  // pg_dump's OWNED BY after CREATE TABLE: ownership is already the table's
    if (option == "restart") {
      store.set(def->oid, elem.contains("arg") ? option_int(elem, ctx) : def->start, false);
      continue;
    }
    throw Error(SqlState::feature_not_supported, "ALTER SEQUENCE ... " + option + " is not supported by Tally");
  }
  return "ALTER SEQUENCE";
}

uint32_t create_owned_sequence(catalog::TableDef& def, size_t column, const nlohmann::json* options,
                               StatementContext& ctx) {
  auto& store = store_of(ctx);
  catalog::ColumnDef& col = def.columns[column];
  catalog::SequenceDef seq;
  seq.type = col.type.id;
  seq.owner_table = def.oid;
  seq.owner_column = static_cast<int>(column);
  // SEQUENCE NAME (pg_dump's identity columns) or <table>_<column>_seq, then
  // _seq1, _seq2, ... (ChooseRelationName).
  std::string given;
  for (const auto& o : options ? *options : nlohmann::json::array()) {
    const auto& elem = o.at("DefElem");
    if (elem.value("defname", std::string()) == "sequence_name")
      given = elem.at("arg").at("List").at("items").back().at("String").value("sval", std::string());
  }
  const std::string base = def.name + "_" + col.name;
  seq.name = given.empty() ? base + "_seq" : given;
  if (!given.empty() && (relation_name_taken(ctx, seq.name, &def) || sequence_exists(ctx, seq.name)))
    throw Error(SqlState::duplicate_table, "relation \"" + seq.name + "\" already exists");
  for (int n = 1; relation_name_taken(ctx, seq.name, &def) || sequence_exists(ctx, seq.name); ++n)
    seq.name = base + "_seq" + std::to_string(n);
  apply_options(seq, options ? *options : nlohmann::json::array(), ctx);
  const std::string seq_name = seq.name;
  const auto created = store.create(std::move(seq));
  col.default_expr = "nextval('" + seq_name + "'::regclass)";
  col.not_null = true;
  return created.oid;
}

void drop_owned_sequences(uint32_t table_oid, StatementContext& ctx) {
  if (!ctx.sequences) return;
  auto& store = ctx.sequences->store();
  for (const auto& seq : store.list())
    if (seq.owner_table == table_oid) store.drop(seq.oid);
}

std::string drop_sequences(const nlohmann::json& stmt, StatementContext& ctx) {
  const bool missing_ok = stmt.value("missing_ok", false);
  std::vector<uint32_t> oids;
  for (const auto& obj : stmt.at("objects")) {
    const auto& items = obj.at("List").at("items");
    const std::string name = items.back().at("String").value("sval", std::string());
    auto def = ctx.sequences ? ctx.sequences->store().find(name) : std::nullopt;
    if (!def) {
      if (missing_ok) {
        ctx.out.notice(Error(SqlState::successful_completion, "sequence \"" + name + "\" does not exist, skipping",
                             Severity::notice));
        continue;
      }
      throw Error(SqlState::undefined_table, "sequence \"" + name + "\" does not exist");
    }
    if (def->owner_table != 0 && !stmt.value("behavior", std::string()).ends_with("CASCADE")) {
      if (auto owner = ctx.store.catalog().find_table(def->owner_table)) {
        throw std::move(Error(SqlState::dependent_objects_still_exist,
                              "cannot drop sequence " + name + " because other objects depend on it")
                            .with_detail("default value for column " +
                                         owner->def.columns[static_cast<size_t>(def->owner_column)].name + " of table " +
                                         owner->def.name + " depends on sequence " + name)
                            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
      }
    }
    oids.push_back(def->oid);
  }
  for (const uint32_t oid : oids) ctx.sequences->store().drop(oid);
  return "DROP SEQUENCE";
}

}  // namespace tally::executor::ddl
