#pragma once
// Name and type binding of expressions: libpg_query's parse tree -> typed
// Expr trees, with PostgreSQL's rules for identifiers (case folding, quoted
// names), operator/function resolution and implicit casts, and parameter type
// inference ($1 compared with an int4 column is int4).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sqlstate.hpp"
#include "executor/cast.hpp"
#include "executor/expression.hpp"
#include "executor/relation_scope.hpp"

namespace tally::executor {

class SessionSequences;
class Settings;

struct ScopeColumn {
  std::string name;
  SqlType type;
};

// What an expression may refer to, and the hooks the SELECT planner uses to
// replace aggregate calls and GROUP BY expressions by references to the
// aggregation's output.
struct BindContext {
  std::string table_name;   // relation name (or alias) columns may be qualified with
  std::vector<ScopeColumn> columns;
  // Several relations (joins, derived tables): when set, column references
  // resolve through it to indexes of its column space, and `columns` and
  // `table_name` serve only for messages.
  const RelationScope* relations = nullptr;
  // A column reference nothing here has: an enclosing query's column (a
  // correlated subquery). Returns null when the enclosing query lacks it too.
  std::function<ExprPtr(const nlohmann::json& column_ref)> outer_column;
  // A subquery expression (EXISTS, IN, scalar, ANY/ALL); unset: 0A000.
  std::function<ExprPtr(const nlohmann::json& sublink)> on_sublink;
  std::vector<uint32_t>* parameter_types = nullptr;  // grows; 0 = not yet known
  const Settings* settings = nullptr;
  std::string session_user;
  std::string database;
  int32_t backend_pid = 0;
  int64_t transaction_time_us = 0;  // PlanContext::transaction_time_us
  // The session's sequences (nextval, currval, setval, lastval); null: none.
  SessionSequences* sequences = nullptr;
  // Called for every node before it is bound; a non-null result replaces it.
  std::function<ExprPtr(const nlohmann::json& node)> intercept;
  // Called for aggregate calls (count, sum, ..., FILTER, WITHIN GROUP); when
  // unset an aggregate here is an error (42803 in WHERE, for instance).
  std::function<ExprPtr(const nlohmann::json& call, const std::string& name)> on_aggregate;
  std::string aggregate_forbidden_reason = "aggregate functions are not allowed here";
  // Called for calls with OVER (window functions, aggregates as windows);
  // when unset a window call here is an error with this code and reason
  // (42P20 in WHERE, 42803 inside an aggregate's arguments).
  std::function<ExprPtr(const nlohmann::json& call, const std::string& name)> on_window;
  SqlState window_forbidden_state = SqlState::windowing_error;
  std::string window_forbidden_reason = "window functions are not allowed here";
};

ExprPtr bind_expression(const nlohmann::json& node, BindContext& context);
// Coerces an expression to a type (literals and untyped parameters take the
// type directly; others get a cast). Throws 42804 when the cast is not allowed.
ExprPtr coerce_to(ExprPtr expr, SqlType to, CastContext cast_context, BindContext& context,
                  const char* what = nullptr);
// Binds a boolean condition (WHERE, HAVING, FILTER): 42804 when not boolean.
ExprPtr bind_condition(const nlohmann::json& node, BindContext& context, const char* clause);
// The type named by a TypeName node (int, numeric(10,2), varchar(20), ...). 42704 if unknown.
SqlType resolve_type_name(const nlohmann::json& type_name);
// Whether a function name is an aggregate Tally knows.
bool is_aggregate_name(const std::string& name);
// Whether a function name is a window function that is not an aggregate
// (row_number, rank, lag, ...): it needs an OVER clause.
bool is_window_function_name(const std::string& name);
// Lower-cases an identifier as PostgreSQL's downcase_identifier does (ASCII only).
std::string fold_identifier(std::string_view name);
// A parse node with every "location" field removed (for structural comparison).
nlohmann::json strip_locations(const nlohmann::json& node);
// strip_locations(a) == strip_locations(b), without building either copy: the
// planner asks it of every sub-expression of a grouped SELECT, and the copies
// were a quarter of planning a new statement text.
bool equal_ignoring_locations(const nlohmann::json& a, const nlohmann::json& b);
// The column name PostgreSQL gives an output expression ("?column?", "sum", "a").
std::string output_column_name(const nlohmann::json& node);

}  // namespace tally::executor
