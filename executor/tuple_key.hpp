#pragma once
// A byte string identifying a tuple of values: the cache key of a correlated
// subquery's run and of a lateral side's, whose result for a tuple is made
// once per statement.
#include <string>
#include <vector>

#include "executor/value.hpp"

namespace tally::executor {

std::string tuple_key(const std::vector<Value>& values);

}  // namespace tally::executor
