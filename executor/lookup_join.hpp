#pragma once
// Lookup joins: a star join feeding an aggregate, run as a scan of the large
// relation (the fact table) that looks its joined relations up by key.
//
// An inner join whose build side has one row per key (a dimension: part,
// supplier, the orders of a date range) and an integer key whose range is
// not much wider than its rows is held as arrays indexed by the key: the
// build row of each key, and per column the build rows' values. A value of
// the joined relation is then a lookup of the fact row's key (LookupExpr):
// no hash table, no joined rows, and the whole query is one table's
// aggregate, which the engines run with their WHERE and input programs
// (ProgramOp::lookup), on the GPU over its resident columns included.
//
// Whether a build side qualifies (unique keys, a dense enough range) is
// known only once it ran: the plan keeps its hash-join form beside the
// lookup form (lookup_rewrite.hpp), and a run that finds a duplicate key or
// a range too wide runs the hash joins.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/column_program.hpp"
#include "common/memory_tracker.hpp"
#include "executor/expression.hpp"
#include "storage/string_dictionary.hpp"
#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

struct ExecContext;

// One joined relation as arrays by key: run once per statement.
struct LookupTable {
  int64_t base = 0;               // the smallest key
  uint64_t span = 0;              // keys from base
  Vector keys;                    // the key of each build row
  std::vector<Vector> values;     // per lookup column: its value on each build row
  // Per key base + k: its build row, and whether one has it. Made at once
  // where the keys do not ascend (the check for a repeated key needs them),
  // else only where the host evaluates a lookup (host_arrays): a GPU run
  // scatters its own from the keys (LookupColumn::from_keys).
  std::vector<int32_t> row_of;
  std::vector<uint8_t> present;
  // Keys spanning more than an array by key may (a composite key packed
  // into one integer, sparse ids): the build rows by key in a hash table
  // (ProgramColumn::hashed), made at once; row_of and present stay empty.
  std::vector<LookupSlot> slots;
  std::unique_ptr<std::once_flag> arrays_made = std::make_unique<std::once_flag>();
  // Program columns made on first use: each value column by row; values
  // converted for programs live here.
  std::vector<std::optional<ProgramColumn>> value_columns;
  std::vector<std::vector<int64_t>> program_ints;
  std::vector<std::vector<uint8_t>> program_valid;
  std::string description;        // EXPLAIN ANALYZE's line for it
  double host_arrays_ms = 0;      // time scattering row_of and present, where made
  MemoryReservation memory;       // all of the above, against the statement's budget

  // row_of and present, made once (thread-safe); false where a key repeats.
  bool host_arrays();
  bool unique_keys = true;
};

// The key range a lookup table may span at most (a row number and a flag
// per key): a wider one is joined by hashing, whose memory follows the rows.
constexpr uint64_t kLookupMaxSpan = uint64_t{1} << 30;

// The joined relations of one lookup form, filled when it runs (as a
// subquery's cache is: a plan runs once at a time).
class LookupSet {
 public:
  explicit LookupSet(size_t tables) : tables_(tables) {}
  size_t size() const { return tables_.size(); }
  LookupTable& table(size_t i) { return tables_[i]; }
  const LookupTable& table(size_t i) const { return tables_[i]; }
  void clear() {
    for (auto& t : tables_) t = LookupTable{};
  }

 private:
  std::vector<LookupTable> tables_;
};

// What the lookup form runs of one joined relation: its build side (an
// operator of the hash-join form, which owns it), the key and the lookup
// columns over its rows (bound to the query's column space).
struct LookupSource {
  const PhysicalOperator* build = nullptr;
  ExprPtr build_key;
  std::vector<ExprPtr> columns;
  std::string name;  // the relation, for EXPLAIN
};

// Runs `source` into `table`: false where its keys repeat; keys spanning
// more than `max_unique_span` keys are hashed (LookupTable::slots), and
// keys that do not ascend spanning more than `max_span` are checked for a
// repeat with a bit per key (else an array the size of the range is made on
// the host to tell). The table is left for the caller to clear.
bool build_lookup(const LookupSource& source, size_t space_width, uint64_t max_span, uint64_t max_unique_span,
                  ExecContext& context, LookupTable& table);

// Value `column` of the joined relation `table` of `set`, looked up by
// `key` (over the fact table's columns); column -1 is the build row's
// number (int4), NULL where no row has the key: an inner join's test.
class LookupExpr final : public Expr {
 public:
  LookupExpr(SqlType type, ExprPtr key, std::shared_ptr<LookupSet> set, size_t table, int column,
             std::optional<int32_t> scale = std::nullopt)
      : Expr(type), key(std::move(key)), set(std::move(set)), table(table), column(column), scale(scale) {}
  Vector evaluate(const EvalInput& input) const override;
  ExprPtr key;
  std::shared_ptr<LookupSet> set;
  size_t table;
  int column;
  // A numeric value's scale where every row has the same (a column of
  // declared scale and arithmetic on those): what programs need to hold it.
  std::optional<int32_t> scale;
};

// The program columns of a lookup: the key's build row (made from the keys
// where they ascend), then (column >= 0) the value by that row; nullopt
// where the value has no program form (text, numerics past 18 digits or of
// varying scale, intervals).
LookupColumn lookup_rows_column(LookupTable& table);
std::optional<ProgramColumn> lookup_value_column(LookupTable& table, int column, int32_t scale);
// A text column's values as the codes of the one dictionary (set in
// `dictionary`) they are held in; nullopt where they are not coded.
std::optional<ProgramColumn> lookup_text_codes_column(LookupTable& table, int column,
                                                      std::shared_ptr<const storage::StringDictionary>& dictionary);

}  // namespace tally::executor
