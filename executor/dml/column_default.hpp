#pragma once
// Column DEFAULTs: a constant, nextval('sequence'::regclass) (serial and
// identity columns, and pg_dump's ALTER COLUMN ... SET DEFAULT nextval(...)),
// or the statement's time (now(), CURRENT_TIMESTAMP, CURRENT_DATE,
// LOCALTIMESTAMP: one instant per statement).
// The catalog keeps each as PostgreSQL prints it (pg_get_expr of adbin:
// "5", "'x'::text", "nextval('t_id_seq'::regclass)"), which is also what an
// INSERT evaluates.
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/dml/constant_value.hpp"

namespace tally::executor::dml {

// The printed form of a DEFAULT clause's expression for column `column`
// (checked: the constant casts to the column's type, the sequence exists).
// Other expressions: 0A000.
std::string default_expression(const StatementContext& ctx, const nlohmann::json& raw_expr,
                               const catalog::ColumnDef& column);

// The value a row takes in `column` when an INSERT gives none (or DEFAULT):
// NULL without a default; nextval runs here.
ConstantValue column_default(const StatementContext& ctx, const catalog::ColumnDef& column);

// The sequence a nextval('s') or nextval('s'::regclass) call names ("": not such a call).
std::string nextval_argument(const nlohmann::json& expr);

// The sequence name of "nextval('name'::regclass)" (empty: not that form).
std::string nextval_sequence(const std::string& default_expr);

}  // namespace tally::executor::dml
