#pragma once
// UPDATE t SET ... FROM <list> WHERE <cond> and DELETE FROM t USING <list>
// WHERE <cond>, as the target-only statements update_delete runs: the WHERE
// becomes EXISTS (SELECT 1 FROM <list> WHERE <cond>), a correlated semi join
// that matches each target row once however many rows of the list it joins
// (PostgreSQL updates or deletes such a row once), and each SET value that
// names a column (SELECT min(<value>) FROM <list> WHERE <cond>), which the
// planner decorrelates into a grouped join (a correlated LIMIT 1 would run
// once per target row: 16 s for 100,000 rows). Where a target row joins one
// row of the list, as in the usual join on the list's key, that is its
// value; where it joins several, PostgreSQL takes the values of one of them
// without saying which, and this takes each column's least (NULL only
// where every one is).
// Inside the subqueries an unqualified name binds to the list first, where
// PostgreSQL would call a name of both the target and the list ambiguous:
// the caller checks that with the list's columns (ambiguous_name).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor::dml {

// The list of an UPDATE's FROM or a DELETE's USING (empty: none).
const nlohmann::json& from_list(const nlohmann::json& stmt, bool is_update);

// The statement without its list, rewritten as above; stmt itself where it
// has none. Throws 42712 where the list names the target again unaliased.
nlohmann::json without_from_list(const nlohmann::json& stmt, bool is_update, const std::string& target_name);

// 42712 where the list names the target again unaliased: inside the
// subqueries that name would be the list's.
void refuse_target_named_again(const nlohmann::json& list, const std::string& target_name);

// SELECT * FROM <list> LIMIT 0: the list's column names.
nlohmann::json from_list_columns_select(const nlohmann::json& list);

// Whether an expression reads any column (else it is one value for every row).
bool names_a_column(const nlohmann::json& value);

// (SELECT <value> FROM <list> [WHERE <where>]) as a sublink of `type`
// (EXISTS_SUBLINK, EXPR_SUBLINK).
nlohmann::json sublink(const std::string& type, nlohmann::json value, const nlohmann::json& list,
                       const nlohmann::json* where);
// (SELECT min(<value>) FROM <list> [WHERE <where>]): a joined row's value,
// decorrelated (see above).
nlohmann::json least_over(const nlohmann::json& value, const nlohmann::json& list, const nlohmann::json* where);

// An unqualified column name in `nodes` (outside their nested subqueries)
// that is a column of both the target and the list, if any, with its
// location.
std::optional<std::pair<std::string, int>> ambiguous_name(const std::vector<const nlohmann::json*>& nodes,
                                                          const std::vector<std::string>& target_columns,
                                                          const std::vector<std::string>& list_columns);

}  // namespace tally::executor::dml
