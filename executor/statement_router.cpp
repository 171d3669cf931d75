#include "executor/statement_router.hpp"

namespace tally::executor {

std::optional<ResultSet> route_statement(Session& session, const Session::Analyzed& statement,
                                         const std::vector<Value>& parameters, protocol::ResultWriter& out) {
  (void)session;
  (void)statement;
  (void)parameters;
  (void)out;
  return std::nullopt;
}

}  // namespace tally::executor
