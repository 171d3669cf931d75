#pragma once
// The lookup form of a grouped query over joins (lookup_join.hpp): a chain
// of inner equi-joins whose innermost probe side is a table scan becomes an
// aggregate of that table alone, each joined relation a LookupSource whose
// values the expressions look up by the fact row's key.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/lookup_join.hpp"
#include "executor/result_set.hpp"

namespace tally::executor {

struct BindContext;
struct ExecContext;
struct SelectPlan;

struct LookupForm {
  std::vector<LookupSource> sources;  // nearest the fact table first
  std::shared_ptr<LookupSet> set;
  std::shared_ptr<const SelectPlan> plan;  // the aggregate over the fact table
  size_t space_width = 0;                  // the join form's column space (the sources' expressions)
  std::string fact;                        // the fact table's name, for EXPLAIN
  uint64_t fact_rows = 0;                  // its rows when planned
};

// A relation is looked up where the fact table has at least this many
// times its estimated rows: then building its arrays (a host scan of its
// key and looked-up columns) costs a fraction of the fact table's scan.
// Its keys are held in arrays by key where their range is at most twice
// the fact table's rows and they are unique (they ascend, or sorted they
// do not repeat: a GPU run scatters the array itself from the keys), or an
// eighth of them where the host must make the array to tell; a wider range
// is hashed. A key whose range (from the key column's chunk statistics) is
// under half the relation's estimated rows repeats: the relation's integer
// keys are then packed into one (partsupp by part and supplier), or the
// hash joins run, built on the smaller side.
constexpr double kFactRowsPerLookupRow = 8;
// A larger relation, up to this share of the fact table's rows, is looked
// up where its looked-up values are its columns alone (TPC-H Q9's orders
// by o_orderdate, a quarter of lineitem's rows): a value computed from its
// rows (Q12's tests of o_orderpriority) would be evaluated for each of them
// on the host while building, slower than the hash join it replaces.
constexpr double kFactRowsPerColumnLookupRow = 3;
// few_fact_rows_joined's fact rows are counted this many times over: a
// selective relation (Q9's green parts, 1 in 17) still leaves the fact
// table's rows to look up in a relation a quarter its size, where one of
// 1 in 150 (Q8's part) does not.
constexpr double kFewFactRowsFactor = 8;
// A key range this narrow is looked up whatever the fact table's rows.
constexpr uint64_t kLookupMinSpan = uint64_t{1} << 20;

// The lookup form of `plan` (bound; its source the operator tree that owns
// the build sides), or null where its shape has none: not a plain GROUP BY
// or aggregate, a join that is not inner or has no integer key, an
// expression that cannot be copied (a subquery).
std::shared_ptr<const LookupForm> plan_lookup_form(const SelectPlan& plan, const BindContext& bind);

// Builds the form's lookup tables and runs its plan; nullopt (nothing sent,
// the tables freed) where a build side's keys repeat or span too wide a
// range: the caller runs the joins instead.
std::optional<ResultSet> run_lookup_form(const LookupForm& form, ExecContext& context);

}  // namespace tally::executor
