#pragma once
// pg_get_functiondef's text of a built-in function (psql's \sf), composed
// from its pg_proc row as PostgreSQL 15's ruleutils.c writes it.
#include <string>

#include "executor/function_catalog.hpp"

namespace tally::executor::scalar {

// The CREATE OR REPLACE FUNCTION statement, ending in a newline. An aggregate
// has none: PostgreSQL's 42809 "... is an aggregate function".
std::string function_definition(const PostgresFunction& f);

}  // namespace tally::executor::scalar
