#pragma once
// The types of an INSERT's, UPDATE's, DELETE's or MERGE's parameters that the client
// left unspecified (OID 0), as PostgreSQL's parse analysis gives them: a bare
// $n in VALUES, in an INSERT's SELECT list or in SET takes its target
// column's type, $n::type the cast's, and one compared with a column or passed
// to a function the type the binder resolves there. Clients that send every
// parameter untyped (node-postgres, psqlODBC, pgjdbc's batches) depend on it.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

// Fills the unknown entries of pc.parameter_types (grown as far as the
// statement's highest $n) for an InsertStmt, UpdateStmt, DeleteStmt or
// MergeStmt body.
// 42P01 when the table does not exist, and the errors of planning the
// statement's expressions, as PostgreSQL reports them at Parse.
void infer_dml_parameter_types(const std::string& kind, const nlohmann::json& body, TableProvider& tables,
                               PlanContext& pc);

}  // namespace tally::executor
