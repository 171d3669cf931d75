#include "executor/ddl/column_definition.hpp"

#include <map>
#include <optional>

#include "executor/ddl/type_name.hpp"
#include "executor/dml/column_default.hpp"

namespace tally::executor::ddl {
namespace {

// "<what> is not supported by Tally" ("are" for a plural what).
[[noreturn]] void unsupported(const StatementContext& ctx, const std::string& what, int location,
                              const char* verb = "is") {
  throw std::move(Error(SqlState::feature_not_supported, what + " " + verb + " not supported by Tally")
                      .with_position(ctx.position(location)));
}

// serial, bigserial and smallserial (and serial2/4/8): the integer type of
// a column that owns a sequence.
std::optional<TypeId> serial_type(const nlohmann::json& type_name) {
  const auto& names = type_name.at("names");
  if (names.size() != 1 || type_name.contains("arrayBounds") || type_name.contains("typmods")) return std::nullopt;
  const std::string n = names[0].at("String").value("sval", std::string());
  if (n == "serial" || n == "serial4") return TypeId::int4;
  if (n == "bigserial" || n == "serial8") return TypeId::int8;
  if (n == "smallserial" || n == "serial2") return TypeId::int2;
  return std::nullopt;
}

Error conflicting_null(const std::string& column, const std::string& table) {
  return Error(SqlState::syntax_error,
               "conflicting NULL/NOT NULL declarations for column \"" + column + "\" of table \"" + table + "\"");
}

}  // namespace

bool is_key_constraint(const nlohmann::json& constraint) {
  const std::string type = constraint.value("contype", std::string());
  return type == "CONSTR_PRIMARY" || type == "CONSTR_UNIQUE";
}

void unsupported_constraint(const StatementContext& ctx, const nlohmann::json& constraint) {
  static const std::map<std::string, std::string> names = {
      {"CONSTR_DEFAULT", "DEFAULT"},         {"CONSTR_PRIMARY", "PRIMARY KEY"},
      {"CONSTR_UNIQUE", "UNIQUE"},           {"CONSTR_CHECK", "CHECK"},
      {"CONSTR_FOREIGN", "REFERENCES"},      {"CONSTR_IDENTITY", "GENERATED ... AS IDENTITY"},
      {"CONSTR_GENERATED", "generated columns"}, {"CONSTR_EXCLUSION", "EXCLUDE"}};
  const std::string type = constraint.value("contype", std::string());
  auto it = names.find(type);
  unsupported(ctx, (it == names.end() ? type : it->second) + " constraints", constraint.value("location", -1), "are");
}

ColumnDefinition column_definition(const nlohmann::json& col, const std::string& table, StatementContext& ctx) {
  ColumnDefinition out;
  catalog::ColumnDef& c = out.column;
  c.name = col.value("colname", std::string());
  const int location = col.value("location", -1);
  if (c.name.size() > max_identifier_bytes)
    throw Error(SqlState::name_too_long, "identifier \"" + c.name + "\" is too long");
  const std::optional<TypeId> serial = serial_type(col.at("typeName"));
  c.type = serial ? SqlType{*serial} : resolve_type_name(ctx, col.at("typeName"));
  out.owns_sequence = serial.has_value();
  if (col.contains("collClause")) unsupported(ctx, "COLLATE", location);
  if (!col.contains("constraints")) return out;
  bool saw_null = false;
  for (const auto& con : col["constraints"]) {
    const auto& k = con.at("Constraint");
    const std::string type = k.value("contype", std::string());
    const int con_location = k.value("location", -1);
    if (type == "CONSTR_NOTNULL") {
      if (saw_null) throw std::move(conflicting_null(c.name, table).with_position(ctx.position(con_location)));
      c.not_null = true;
    } else if (type == "CONSTR_NULL") {
      if (c.not_null) throw std::move(conflicting_null(c.name, table).with_position(ctx.position(con_location)));
      saw_null = true;
    } else if (is_key_constraint(k)) {
      out.keys.push_back(&k);
    } else if (type == "CONSTR_IDENTITY") {
      if (out.owns_sequence)
        throw std::move(Error(SqlState::syntax_error, "multiple identity specifications for column \"" + c.name +
                                                          "\" of table \"" + table + "\"")
                            .with_position(ctx.position(con_location)));
      if (c.type.id != TypeId::int2 && c.type.id != TypeId::int4 && c.type.id != TypeId::int8)
        throw Error(SqlState::invalid_parameter_value, "identity column type must be smallint, integer, or bigint");
      c.identity = k.value("generated_when", std::string("a"))[0];
      out.owns_sequence = true;
      out.identity_options = k.contains("options") ? &k["options"] : nullptr;
    } else if (type == "CONSTR_DEFAULT") {
      if (serial)
        throw std::move(Error(SqlState::syntax_error, "multiple default values specified for column \"" + c.name +
                                                          "\" of table \"" + table + "\"")
                            .with_position(ctx.position(con_location)));
      c.default_expr = dml::default_expression(ctx, k.at("raw_expr"), c);
    } else {
      unsupported_constraint(ctx, k);
    }
  }
  return out;
}

}  // namespace tally::executor::ddl
