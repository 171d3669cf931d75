#pragma once
// What SqlSession's utility, transaction and cursor statements share: the
// result of a command that returns no rows, a result of text rows (SHOW,
// EXPLAIN), and the text of a constant argument (SET, BEGIN ISOLATION LEVEL,
// EXPLAIN options).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/result_set.hpp"

namespace tally::executor {

// A result with only a command tag (CommandComplete).
ResultSet command_result(std::string tag);

// A SHOW-tagged result of text columns `names` holding `rows`.
ResultSet text_rows(const std::vector<std::string>& names,
                    const std::vector<std::vector<std::string>>& rows);

// A constant argument (A_Const, or a TypeCast of one) as SET reads it:
// booleans as on/off. 0A000 for any other form.
std::string constant_text(const nlohmann::json& node);

}  // namespace tally::executor
