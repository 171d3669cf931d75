#pragma once
// Hands statements the session does not run itself (CREATE/DROP/TRUNCATE,
// INSERT, COPY, CREATE TABLE AS) to the layer that owns them.
#include <optional>
#include <vector>

#include "executor/sql_session.hpp"

namespace tally::executor {

// nullopt when no layer handles this statement kind (the session answers 0A000).
std::optional<ResultSet> route_statement(SqlSession& session, const AnalyzedStatement& statement,
                                         const std::vector<Value>& parameters, tally::ResultWriter& out);

}  // namespace tally::executor
