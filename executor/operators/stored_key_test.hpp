#pragma once
// A key test (a join's held keys tested by the scan under it, key_test.hpp;
// a restricted grouped run's wanted keys, group_key_filter.hpp) run on the
// stored values of its key columns, a block of rows at a time, when every
// key is a plain integer-like column: the keys of a million-row chunk are
// not converted to int64 vectors (zeroed, then filled) and copied again to
// be evaluated before the test, four passes over memory the caches do not
// hold; each block's keys are converted into a buffer the caches keep, and
// only the rows that pass are converted later, with the rest of their columns.
#include <cstdint>
#include <vector>

#include "executor/operators/key_test.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

// The key as a column read as it is stored (an integer-like column whose
// type is the key's); null otherwise.
const ColumnExpr* stored_integer_key(const Expr& key);

// Appends to `keep` the rows [0, count) whose keys pass `test`: key k of row
// r is the value of stored row `stored[r]` (row r where `stored` is null)
// of `columns[k]`, of type `types[k]`. With `chains` (those `test` looks
// keys up in), one key is tested against their exact bitmap straight from
// its stored values, as KeyChains::matching_rows_by_bits does.
void test_stored_keys(const decltype(KeyTest::test)& test, const KeyChains* chains,
                      const std::vector<const storage::ColumnVector*>& columns, const std::vector<SqlType>& types,
                      const uint32_t* stored, size_t count, std::vector<uint32_t>& keep);

}  // namespace tally::executor
