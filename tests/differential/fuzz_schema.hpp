#pragma once
// The tables the relational differential test queries: three small tables
// whose join keys repeat (duplicates on both sides), hold NULLs and miss each
// other in places, plus an empty table of the same shape as the third, so
// joins, subqueries and set operations meet every edge. Each column has a
// kind that the expression generator types its expressions by.
#include <functional>
#include <string>
#include <vector>

#include "tests/differential/fuzz_random.hpp"

namespace tally::testing {

enum class Kind { Int, Numeric, Float, Text, Date, Bool };

struct FuzzColumn {
  std::string name;
  std::string type;  // SQL type in CREATE TABLE
  Kind kind;
};

struct FuzzTable {
  std::string name;
  std::vector<FuzzColumn> columns;
  int rows = 0;  // rows the loader inserts
};

// t1, t2, t3 and the empty te; every table's first column `id` is unique.
const std::vector<FuzzTable>& fuzz_tables();

// CREATE TABLE and INSERT statements that build the tables with `random`'s data.
std::vector<std::string> fuzz_schema_statements(FuzzRandom& random);

}  // namespace tally::testing
