#pragma once
// PostgreSQL's regexp_split_to_table / regexp_split_to_array splitting: the
// pieces of `s` between the pattern's matches. As PostgreSQL, matches of
// zero length at the start or end of the string or right after a previous
// match are ignored. Patterns run on the regular expressions of
// regex_functions.cpp; flags are PostgreSQL's ('i', 'c'; 'g' is refused).
#include <string>
#include <vector>

namespace tally::executor::scalar {

std::vector<std::string> regexp_split(const std::string& s, const std::string& pattern,
                                      const std::string& flags);

}  // namespace tally::executor::scalar
