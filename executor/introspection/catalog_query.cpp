#include "executor/introspection/catalog_query.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "executor/introspection/query_compiler.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection {
namespace {

using json = nlohmann::json;
using detail::Compiler;
using detail::Parameters;
using detail::Query;

bool reads_catalog_node(const json& node, const CatalogSource& source) {
  if (node.is_object()) {
    if (node.contains("RangeVar")) {
      const auto& rv = node["RangeVar"];
      const std::string schema = rv.value("schemaname", "");
      const std::string name = rv.value("relname", "");
      if (!is_catalog_relation(schema, name)) return false;
      if (!schema.empty()) return true;
      // An unqualified name that is also a user table reads the user table.
      return std::none_of(source.tables.begin(), source.tables.end(), [&](const UserTable& t) { return t.name == name; });
    }
    for (const auto& [key, value] : node.items()) {
      if (reads_catalog_node(value, source)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (reads_catalog_node(v, source)) return true;
    }
  }
  return false;
}

std::vector<tally::FieldDescription> fields_of(const Query& q) {
  std::vector<tally::FieldDescription> fields;
  for (const auto& t : q.targets) fields.push_back(describe_column(t.name, t.type));
  return fields;
}

}  // namespace

ResultSet run_checked(const json& select_stmt, const CatalogSource& source, const Parameters& parameters);

bool reads_catalog(const json& select_stmt, const CatalogSource& source) {
  return reads_catalog_node(select_stmt, source);
}

ResultSet run_catalog_query(const json& select_stmt, const CatalogSource& source, const Parameters& parameters) {
  try {
    return run_checked(select_stmt, source, parameters);
  } catch (const json::exception& e) {
    // A parse-tree shape this evaluator does not expect: a clean error.
    throw Error(SqlState::feature_not_supported, std::string("catalog queries do not support this statement form: ") + e.what());
  }
}

ResultSet run_checked(const json& select_stmt, const CatalogSource& source, const Parameters& parameters) {
  Compiler compiler(source, parameters);
  Query q = compiler.compile_select(select_stmt, nullptr);
  ResultSet result;
  result.fields = fields_of(q);
  for (const auto& t : q.targets) result.columns.emplace_back(t.type);
  const auto rows = q.run(nullptr);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      // reg* values are OIDs, as in the engine; the codec prints their names.
      result.columns[c].push(row[c]);
    }
  }
  result.rows = rows.size();
  return result;
}

std::vector<tally::FieldDescription> catalog_query_fields(const json& select_stmt, const CatalogSource& source,
                                                             const std::vector<SqlType>& parameter_types) {
  Parameters parameters;
  for (const auto& t : parameter_types) parameters.emplace_back(t, Value{Null{}});
  Compiler compiler(source, parameters);
  try {
    return fields_of(compiler.compile_select(select_stmt, nullptr));
  } catch (const json::exception& e) {
    throw Error(SqlState::feature_not_supported, std::string("catalog queries do not support this statement form: ") + e.what());
  }
}

}  // namespace tally::executor::introspection
