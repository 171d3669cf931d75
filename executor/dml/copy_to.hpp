#pragma once
// COPY ... TO: renders a table snapshot's rows in text or CSV format with
// PostgreSQL's escaping/quoting rules, into large CopyData blocks.
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"
#include "executor/dml/copy_options.hpp"

namespace tally::executor::dml {

// Calls sink with blocks of output; returns the number of rows.
uint64_t copy_to(StatementContext& ctx, const catalog::TableSnapshot& snapshot, const std::vector<int>& targets,
                 const CopyOptions& options, const std::function<void(std::string_view)>& sink);

}  // namespace tally::executor::dml
