#include "executor/statement_context.hpp"

#include "executor/cancel_point.hpp"

namespace tally::executor {

namespace {
thread_local const ExecContext* installed = nullptr;
}  // namespace

const ExecContext* current_statement_context() { return installed; }

StatementContextScope::StatementContextScope(const ExecContext& context) {
  if (installed != nullptr) return;
  installed = &context;
  installed_ = true;
}

StatementContextScope::~StatementContextScope() {
  if (installed_) installed = nullptr;
}

ExecContext nested_context(const std::vector<Value>* parameters) {
  ExecContext context;
  context.parameters = parameters;
  context.cancel = const_cast<CancelToken*>(current_cancel_token());
  if (const ExecContext* statement = current_statement_context()) {
    context.memory_budget = statement->memory_budget;
    context.engine = statement->engine;
    context.gpu_engine = statement->gpu_engine;
    context.variant = statement->variant;
    context.lookup_joins = statement->lookup_joins;
    context.launch_config = statement->launch_config;
    context.jit = statement->jit;
  }
  return context;
}

}  // namespace tally::executor
