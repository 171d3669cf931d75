#pragma once
// Mutations that turn a valid query into random, mostly invalid SQL: dropped,
// repeated and swapped tokens, keywords put in the wrong place, huge and odd
// literals, deep nesting of parentheses and subqueries, truncation. The
// grammar-level fuzz test sends what it writes to tallyd.
#include <string>

#include "tests/differential/fuzz_random.hpp"

namespace tally::testing {

class SqlMutator {
 public:
  explicit SqlMutator(FuzzRandom& random) : random_(random) {}

  // `sql` with one to three mutations applied.
  std::string mutate(const std::string& sql);
  // A query nested `depth` levels deep (parentheses, subqueries, CASE, NOT).
  std::string deep(int depth);

 private:
  std::string mutate_once(const std::string& sql);
  std::string odd_literal();

  FuzzRandom& random_;
};

}  // namespace tally::testing
