#pragma once
// The set-returning regular-expression functions' rows, for ProjectSet
// (executor/project_set.cpp). Patterns run on executor/scalar/regex.hpp;
// flags are PostgreSQL's ('i', 'c', and 'g' where the function takes it).
#include <string>
#include <vector>

namespace tally::executor::scalar {

// regexp_split_to_table: the pieces of `s` between the pattern's matches. As
// PostgreSQL, matches of zero length at the start or end of the string or
// right after a previous match are ignored; 'g' is refused.
std::vector<std::string> regexp_split(const std::string& s, const std::string& pattern,
                                      const std::string& flags);

// regexp_matches: one text[] literal per match (the first only without 'g'):
// its groups, or the whole match when the pattern has none. Empty matches
// count, as PostgreSQL's; after one the search goes on a character later.
std::vector<std::string> regexp_matches(const std::string& s, const std::string& pattern,
                                        const std::string& flags);

}  // namespace tally::executor::scalar
