#pragma once
// NOT NULL enforcement shared by INSERT and COPY, with PostgreSQL's 23502
// message and "Failing row contains (...)" detail.
#include <optional>
#include <string>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "common/error.hpp"

namespace tally::executor::dml {

// row[c] is column c's value in text output form, nullopt = NULL.
void check_not_null(const catalog::TableDef& def, const std::vector<std::optional<std::string>>& row);

// The error for a NULL in NOT NULL column `column`; row as above.
Error not_null_violation(const catalog::TableDef& def, size_t column,
                         const std::vector<std::optional<std::string>>& row);

}  // namespace tally::executor::dml
