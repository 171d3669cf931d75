#pragma once
// Random typed scalar expressions and predicates over the columns in scope:
// arithmetic, CASE, COALESCE/NULLIF, string and date functions, comparisons,
// IN lists, LIKE, BETWEEN, and subqueries (scalar, IN / NOT IN, EXISTS /
// NOT EXISTS, ANY / ALL), correlated with the outer scope or not. Nothing it
// writes can fail on PostgreSQL (no division by a column, no overflow from
// the loaded data), so a failure on one side only is a difference.
#include <string>
#include <vector>

#include "tests/differential/fuzz_random.hpp"
#include "tests/differential/fuzz_schema.hpp"

namespace tally::testing {

struct ScopeColumn {
  std::string expr;
  Kind kind;
};

struct Scope {
  std::vector<ScopeColumn> columns;
  // Expressions that together order the scope's rows totally (unique ids of
  // the base tables joined); empty where no such order is known.
  std::vector<std::string> ids;

  bool has(Kind kind) const;
};

class ExpressionGenerator {
 public:
  explicit ExpressionGenerator(FuzzRandom& random) : random_(random) {}

  // A fresh alias for a table or derived table of the current query.
  std::string alias(const char* prefix);
  void reset_aliases() { aliases_ = 0; }

  std::string literal(Kind kind);
  std::string column(Kind kind, const Scope& scope);
  Kind any_kind(const Scope& scope, bool allow_bool = true);
  std::string expr(Kind kind, const Scope& scope, int depth);
  std::string predicate(const Scope& scope, int depth);
  // A base table under a fresh alias, and its columns as a scope.
  std::string base_table(Scope& scope, bool allow_empty = true);

 private:
  std::string comparison(const Scope& scope, int depth);
  std::string subquery_predicate(const Scope& scope, int depth);

  FuzzRandom& random_;
  int aliases_ = 0;
};

}  // namespace tally::testing
