#pragma once
// A statement's or expression's name in SQL words ("CREATE SEQUENCE", "ALTER TABLE"), as
// PostgreSQL's command tags name them, from its parse node: messages about a
// statement never show the parser's node names (CreateSeqStmt).
#include <string>

#include <nlohmann/json.hpp>

namespace tally::executor {

// kind: the parse node's name; body: its value.
std::string statement_words(const std::string& kind, const nlohmann::json& body);

// An expression's parse node in SQL words ("a ROW constructor"), for the
// message that Tally does not support it.
std::string expression_words(const std::string& kind);

}  // namespace tally::executor
