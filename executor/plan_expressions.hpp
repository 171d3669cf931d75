#pragma once
// Helpers the planner uses on bound expressions and on WHERE's parse tree:
// walking an expression's children, the column-space indexes it reads,
// splitting a condition into conjuncts (factoring what every branch of an OR
// shares out of it), and the equality the binder makes of two values.
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/binder.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

// Calls fn on every child expression (of a subquery: only what it reads of
// the enclosing query, its correlated values and tested value).
void for_each_child(Expr& e, const std::function<void(Expr&)>& fn);
// The column-space indexes an expression reads.
void collect_refs(Expr& e, std::set<int>& out);
// How many references to column space index `column` an expression holds.
int count_refs(Expr& e, int column);
// Runs now each subquery of `e` that runs once per statement
// (SubqueryExpr::run_once_ahead), before its evaluation is spread over
// threads that would otherwise wait for one of them to make it.
void run_subqueries_ahead(const Expr& e, const std::vector<Value>* parameters);
bool has_subquery(Expr& e);
// Whether e reads a statement parameter ($n).
bool has_parameter(Expr& e);
// The text or varchar column e is, bare or cast to text (not char(n), whose
// comparison ignores trailing blanks); null for anything else.
const ColumnExpr* stored_text_column(const Expr* e);
// A conjunct testing such a column for equality with other expressions:
// `c = x`, `c <> x` (negated), `c IN (x, ...)`, `c NOT IN (...)` (negated);
// nullopt for any other shape. The expressions are the conjunct's.
struct TextEqualityShape {
  const ColumnExpr* column = nullptr;
  std::vector<const Expr*> values;
  bool negated = false;
};
std::optional<TextEqualityShape> text_equality_shape(const Expr& conjunct);
// Whether e reads input columns collect_refs does not list: a subquery's
// (its correlation may read any), a window function's result (a column
// past the query's own, by position) or an expression another plan owns
// (SharedExpr: walks do not enter it). Narrowing an input to the columns
// collect_refs lists is safe only where this is false.
bool reads_unlisted_columns(Expr& e);
// Whether `e` is NULL on every row, whatever the row: a NULL constant,
// parameter or outer value, or a strict function of one (`l_partkey =
// $outer` run for a NULL outer value). A conjunct that is can pass no row.
bool null_on_every_row(const Expr& e, const std::vector<Value>* parameters);
// Functions whose value may differ between two calls with the same
// arguments, or that act (nextval): evaluated per distinct value, or on
// several chunks at once, they would not run as PostgreSQL runs them (once
// per row, in row order).
bool volatile_function(const std::string& name);
// Whether `e` calls a volatile function anywhere.
bool has_volatile_function(Expr& e);
// Whether `e` reads no column: constants, parameters and functions of them
// that are not volatile, folded once, as PostgreSQL's planner folds them.
bool foldable(const Expr& e);
// A foldable expression's value as an exact number: an integer-like value
// (integers, dates, timestamps) at scale 0, a finite numeric of scale >= 0
// as it is; nullopt for anything else (NULL, NaN, other types), and where
// evaluating it raises, which the caller's row-wise path raises again.
std::optional<Numeric> exact_constant(const Expr& e, const std::vector<Value>* parameters);
// Points every column reference i at to[i].
void remap(Expr& e, const std::vector<int>& to);
// `l = r` over a two-column input [l, r], bound by the binder (its casts).
ExprPtr bind_pair_equality(SqlType left, SqlType right, const BindContext& base);
// Replaces the column references of a comparison over [l, r] by by[0] and by[1].
void substitute(ExprPtr& e, std::vector<ExprPtr>& by);
// The conjuncts of a condition; (a AND b) OR (a AND c) gives a, (b OR c).
void split_and(const nlohmann::json& node, std::vector<nlohmann::json>& out);
bool json_any(const nlohmann::json& node, const std::function<bool(const nlohmann::json&)>& pred);
// What json_walk does after visiting a node.
enum class WalkStep { descend, skip_children, stop };
// Visits every object of a parse tree (arrays are walked through) with a
// stack of its own, in no particular order: the parser's trees nest
// thousands of levels deep (a CASE in a CASE ...), past what a recursive walk
// may take of a session's stack. True where a visit stopped the walk.
bool json_walk(const nlohmann::json& root, const std::function<WalkStep(const nlohmann::json&)>& visit);
// A parse tree with every bare column reference (a ColumnRef node) that
// `replace` gives a value for replaced by that value; the rest as it is.
nlohmann::json replace_column_refs(const nlohmann::json& node,
                                   const std::function<std::optional<nlohmann::json>(const nlohmann::json& ref)>& replace);
bool contains_sublink_node(const nlohmann::json& node);
bool has_aggregate_call(const nlohmann::json& node);
// Whether a parse tree holds a call with OVER (a window function).
bool has_window_call(const nlohmann::json& node);

}  // namespace tally::executor
