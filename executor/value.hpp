#pragma once
// Runtime values of the executor. A Value is one SQL datum (NULL, boolean,
// any integer-like type as int64 — int2/int4/int8/date/timestamp/oid —, any
// float as double, numeric, or text); its SQL type travels beside it (in the
// expression or column that produced it). A Vector is a column of values of one
// type in native arrays, the unit expressions evaluate and results stream from.
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "common/sql_type.hpp"
#include "executor/numeric.hpp"
#include "executor/types/interval_io.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

struct Null {
  bool operator==(const Null&) const = default;
};
using Interval = types::Interval;
using Value = std::variant<Null, bool, int64_t, double, Numeric, std::string, Interval>;

inline bool is_null(const Value& v) { return std::holds_alternative<Null>(v); }

// How a type is held in a Value/Vector.
enum class Physical : uint8_t { boolean, integer, floating, numeric, text, interval };
Physical physical_of(TypeId id);

// avg(int2/int4) of an engine result left as its parts: row i's value is
// sum[i] / count[i] at numeric_div's scale (NULL when count[i] is 0). Only
// the streaming path (ExecContext::stream_to_client) asks for it, so 8M
// groups' avg is encoded into DataRows straight from the engine's arrays
// instead of through 8M Numerics (16 bytes and a division each).
struct AvgParts {
  std::vector<int64_t> sum, count;
  // Set instead of `count` when the counts are shared with an int8 count
  // column of the same result (Vector::shared_ints): 8M groups' counts held once.
  std::shared_ptr<const std::vector<int64_t>> shared_count;
  const int64_t* counts() const { return shared_count ? shared_count->data() : count.data(); }
};

// A column of values of one SQL type. Exactly one of the native arrays is used,
// chosen by physical_of(type.id); `nulls` is empty when no value is NULL.
struct Vector {
  SqlType type;
  std::vector<int64_t> ints;        // boolean (0/1) and integer-like types
  std::vector<double> floats;       // float4, float8
  std::vector<Numeric> numerics;    // numeric
  std::vector<std::string> texts;   // text kinds, unless coded()
  std::vector<Interval> intervals;  // interval
  std::vector<uint8_t> nulls;       // 1 = NULL
  size_t count = 0;
  // Set only on a numeric avg column whose values are not materialized:
  // `numerics` is empty, `nulls` still marks the NULL rows, get() computes.
  std::shared_ptr<const AvgParts> avg_parts;
  // Set only on a streamed integer column (as avg_parts) whose values are an
  // array another column of the result also reads (a count shared with an
  // avg's AvgParts::shared_count): `ints` is empty, int_data() reads these.
  std::shared_ptr<const std::vector<int64_t>> shared_ints;
  // A text column may be held coded: row i is entry codes[i] of *dictionary
  // (a stored column's dictionary, shared; NULL rows hold 0) and `texts` is
  // empty. An aggregation's text keys are codes already, so its result keeps
  // them: a million groups reach the client, or CREATE TABLE AS, without a
  // std::string each. text_at() reads either form; writing a row (set, push)
  // materializes the strings first.
  std::vector<int32_t> codes;
  std::shared_ptr<const storage::StringDictionary> dictionary;

  Vector() = default;
  explicit Vector(SqlType t) : type(t) {}

  size_t size() const { return count; }
  // The integer values, wherever they are held (ints or shared_ints).
  const int64_t* int_data() const { return shared_ints ? shared_ints->data() : ints.data(); }
  bool null_at(size_t i) const { return !nulls.empty() && nulls[i] != 0; }
  bool coded() const { return dictionary != nullptr; }
  // Row i of a text column (not NULL), coded or not.
  std::string_view text_at(size_t i) const {
    return coded() ? dictionary->at(codes[i]) : std::string_view(texts[i]);
  }
  // Turns a coded text column into strings (no-op otherwise).
  void materialize();
  Value get(size_t i) const;
  // get(i) into `out`: a text row is copied into out's string when out
  // holds one already, reusing its buffer, so a loop over rows that keeps
  // its Values allocates no string per row (every thread of tallyd shares
  // one malloc arena: common/heap_retention.hpp).
  void get_into(size_t i, Value& out) const;
  void push(const Value& v);
  void reserve(size_t n);
  // Sets row i (the vector must already have that many rows).
  void set(size_t i, const Value& v);
  // Sets row i to row j of `from`, a vector of the same physical kind,
  // without a Value between them (a CASE's or COALESCE's rows).
  void set_from(size_t i, const Vector& from, size_t j);
  void resize(size_t n);
  void set_null(size_t i);
};

// SQL comparison of two non-NULL values of the same physical kind
// (text compares bytewise, as PostgreSQL's C collation).
int compare_values(const Value& a, const Value& b);
// Hash for grouping/DISTINCT of non-NULL values (equal values hash alike).
uint64_t hash_value(const Value& v);
// PostgreSQL's interval_cmp_value: the interval as microseconds with a month
// counted as 30 days, so '1 mon' = '30 days' (they compare and hash alike).
__int128 interval_key(const Interval& v);
bool values_equal(const Value& a, const Value& b);

}  // namespace tally::executor
