#pragma once
// The names a query's FROM clause makes visible: the columns of several
// relations (tables, derived tables, WITH queries, join results), each
// qualified by its relation's name or alias, in one flat column space that
// bound expressions index. Resolution follows PostgreSQL: an unqualified name
// must belong to one relation (else 42702), a qualifier must name a relation
// of the clause (else 42P01), and the columns merged by JOIN ... USING /
// NATURAL are visible unqualified once.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::executor {

struct ScopedColumn {
  std::string relation;  // qualifier; empty for a merged USING column
  std::string name;
  SqlType type;
  int index = 0;              // position in the query's column space
  bool unqualified = true;    // visible without a qualifier
  bool in_star = true;        // false: a system column, reached by name only
};

class RelationScope {
 public:
  // Adds a relation; 42712 when its name is already used in this scope.
  void add_relation(const std::string& name, const std::vector<ScopedColumn>& columns);
  // A column visible unqualified only (the merged column of a USING join);
  // hides the same name of the joined relations from unqualified lookup.
  void add_merged(const std::string& name, SqlType type, int index, const std::vector<int>& hidden);

  // The column space index of a reference (parts: [relation,] column, or
  // [schema, relation, column]), or -1 when no relation here has it. Throws
  // 42702 (ambiguous) and 42P01 (qualifier names no relation here: only
  // when `outer_may_have` is false, else -1 so the enclosing query is asked).
  int resolve(const std::vector<std::string>& parts, bool outer_may_have) const;
  bool has_relation(const std::string& name) const;
  // `*` or `relation.*`: the columns with their qualifiers, in PostgreSQL's order.
  std::vector<ScopedColumn> star(const std::string& relation) const;
  const std::vector<ScopedColumn>& columns() const { return columns_; }
  // The qualified name PostgreSQL shows for a column in errors ("t.a").
  std::string display_name(int index) const;
  // The column space indexes references resolved to (the columns scans must read).
  const std::set<int>& used() const { return used_; }
  void mark_used(int index) const { used_.insert(index); ++uses_[index]; }
  // How many references resolved to a column: a scan need not output a
  // column all of whose references are in its own filters.
  int uses(int index) const {
    const auto it = uses_.find(index);
    return it == uses_.end() ? 0 : it->second;
  }

 private:
  std::vector<ScopedColumn> columns_;
  std::vector<std::string> relations_;
  std::vector<int> star_order_;  // indexes into columns_
  mutable std::set<int> used_;
  mutable std::map<int, int> uses_;
};

}  // namespace tally::executor
