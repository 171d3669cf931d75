#pragma once
// EXPLAIN's options (ANALYZE, COSTS, FORMAT) from the parse tree, checked as
// PostgreSQL checks them, and the result column each format answers in.
#include <nlohmann/json.hpp>

#include "common/query_handler.hpp"
#include "executor/explain_tree.hpp"

namespace tally::executor {

// Throws 22023 for an unknown format or a bad boolean value.
ExplainOptions explain_options(const nlohmann::json& options);
// "QUERY PLAN": json for JSON, xml for XML, text otherwise.
tally::FieldDescription explain_field(const ExplainOptions& options);

}  // namespace tally::executor
