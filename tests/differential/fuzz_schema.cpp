#include "tests/differential/fuzz_schema.hpp"

#include <cstdio>

namespace tally::testing {

const std::vector<FuzzTable>& fuzz_tables() {
  static const std::vector<FuzzTable> tables = {
      {"t1",
       {{"id", "int", Kind::Int}, {"a", "int", Kind::Int}, {"b", "int", Kind::Int}, {"s", "text", Kind::Text},
        {"n", "numeric(8,2)", Kind::Numeric}, {"f", "float8", Kind::Float}, {"dt", "date", Kind::Date},
        {"flag", "boolean", Kind::Bool}},
       120},
      {"t2",
       {{"id", "int", Kind::Int}, {"a", "int", Kind::Int}, {"c", "bigint", Kind::Int}, {"s", "text", Kind::Text},
        {"n", "numeric(8,2)", Kind::Numeric}, {"dt", "date", Kind::Date}},
       80},
      {"t3",
       {{"id", "int", Kind::Int}, {"a", "int", Kind::Int}, {"b", "smallint", Kind::Int}, {"s", "text", Kind::Text},
        {"f", "float8", Kind::Float}},
       40},
      {"te",
       {{"id", "int", Kind::Int}, {"a", "int", Kind::Int}, {"b", "smallint", Kind::Int}, {"s", "text", Kind::Text},
        {"f", "float8", Kind::Float}},
       0},
  };
  return tables;
}

namespace {

std::string value(FuzzRandom& random, const FuzzColumn& column, int id) {
  if (column.name == "id") return std::to_string(id);
  // Join keys: few distinct values, so keys repeat on both sides.
  if (random.chance(10)) return "NULL";
  static const char* texts[] = {"alpha", "Beta", "gamma", "ärger", "Ωmega", "a_b", "", "zeta"};
  char buffer[64];
  switch (column.kind) {
    case Kind::Int:
      if (column.name == "a") return std::to_string(random.pick(8));
      return std::to_string(random.pick(41) - 20);
    case Kind::Numeric:
      std::snprintf(buffer, sizeof buffer, "%d.%02d", random.pick(2000) - 1000, random.pick(4) * 25);
      return buffer;
    case Kind::Float:
      // Sevenths: not exact in binary, so float arithmetic is exercised.
      std::snprintf(buffer, sizeof buffer, "%.17g", (random.pick(2001) - 1000) / 7.0);
      return buffer;
    case Kind::Text:
      return std::string("'") + random.one_of(texts) + "'";
    case Kind::Date:
      std::snprintf(buffer, sizeof buffer, "'2020-%02d-%02d'", 1 + random.pick(12), 1 + random.pick(28));
      return buffer;
    case Kind::Bool:
      return random.chance(50) ? "true" : "false";
  }
  return "NULL";
}

}  // namespace

std::vector<std::string> fuzz_schema_statements(FuzzRandom& random) {
  std::vector<std::string> out;
  for (const auto& table : fuzz_tables()) {
    std::string create = "CREATE TABLE " + table.name + " (";
    for (size_t i = 0; i < table.columns.size(); ++i) {
      create += (i ? ", " : "") + table.columns[i].name + " " + table.columns[i].type;
    }
    out.push_back(create + ")");
    if (table.rows == 0) continue;
    std::string insert = "INSERT INTO " + table.name + " VALUES ";
    for (int r = 0; r < table.rows; ++r) {
      insert += r ? ", (" : "(";
      for (size_t i = 0; i < table.columns.size(); ++i) {
        insert += (i ? ", " : "") + value(random, table.columns[i], r + 1);
      }
      insert += ")";
    }
    out.push_back(insert);
  }
  return out;
}

}  // namespace tally::testing
