#pragma once
// Random queries of the shapes analysts write, over the fuzz schema: joins of
// two or three tables (inner, left, right, full, cross; multi-column keys,
// non-equi residuals), subqueries in FROM, WITH, window functions, set
// operations, DISTINCT / DISTINCT ON, GROUP BY with GROUPING SETS / ROLLUP /
// CUBE and HAVING, ORDER BY ... LIMIT / OFFSET. Every query's answer is
// determined by the data: ORDER BY always covers every output column, and a
// window function that depends on row order is ordered by the rows' unique ids.
#include <string>
#include <vector>

#include "tests/differential/expression_generator.hpp"

namespace tally::testing {

struct GeneratedQuery {
  std::string sql;
  bool ordered = false;  // rows must come in this order (ORDER BY over every column)
};

class QueryGenerator {
 public:
  explicit QueryGenerator(uint64_t seed) : random_(seed), exprs_(random_) {}

  GeneratedQuery next();

 private:
  struct Relation {
    std::string sql;
    std::vector<Kind> kinds;
    bool ordered = false;
  };
  struct Cte {
    std::string name;
    std::vector<Kind> kinds;
  };

  Relation relation(int depth, bool top, const std::vector<Kind>* required = nullptr);
  Relation select(int depth, bool top, const std::vector<Kind>* required);
  Relation set_operation(int depth, bool top);
  std::string from_item(Scope& scope, int depth, bool allow_empty);
  std::string from_clause(Scope& scope, int depth);
  std::string join_condition(const Scope& left, const Scope& right, bool equi_only);
  std::string plain_list(const Scope& scope, int depth, const std::vector<Kind>* required, Relation& out);
  std::string aggregate_tail(const Scope& scope, bool top, Relation& out, std::string& list);
  std::string window_call(const Scope& scope, bool top, Kind& kind);
  void order_by_all(Relation& rel, bool limit);

  FuzzRandom random_;
  ExpressionGenerator exprs_;
  std::vector<Cte> ctes_;
};

}  // namespace tally::testing
