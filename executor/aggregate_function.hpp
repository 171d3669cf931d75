#pragma once
// Aggregate functions: which ones exist, their PostgreSQL 15 result types, and
// the per-group accumulators of the generic (any type, DISTINCT, ordered-set)
// path. Final values follow PostgreSQL's algorithms exactly (numeric
// variance scale rules, Youngs-Cramer float accumulation), shared with the
// fast engines through finalize.hpp.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/sql_type.hpp"
#include "executor/value.hpp"

namespace tally::executor {

enum class AggKind {
  count_star, count, sum, avg, min, max,
  var_samp, var_pop, stddev_samp, stddev_pop,
  corr, covar_pop, covar_samp, regr_r2, regr_slope, regr_intercept, regr_count,
  regr_sxx, regr_syy, regr_sxy, regr_avgx, regr_avgy,
  bool_and, bool_or,
  percentile_cont, percentile_disc, mode,
  // The group's values (NULLs too) as an array, in the order of the
  // aggregate's ORDER BY keys (ordered_input_arity).
  array_agg,
  // The group's non-NULL values concatenated, each after the first preceded
  // by its row's delimiter (none when NULL), in the same order as array_agg.
  string_agg,
  // The value at 0-based position `direct` of the group's non-NULL values
  // in the aggregate's order (NULL past the last). Not an SQL aggregate: a
  // top-n per partition runs as one per rank it keeps (top_n_groups.hpp).
  ordered_nth,
};

// One key of the ORDER BY inside an order-sensitive aggregate's call.
struct AggregateOrderKey {
  bool descending = false;
  bool nulls_first = false;  // NULLS FIRST, or DESC without NULLS LAST
};

struct AggregateSignature {
  AggKind kind;
  std::vector<SqlType> arg_types;   // after implicit casts; ORDER BY keys last (ordered_input_arity)
  SqlType result_type;
  std::vector<AggregateOrderKey> order;  // one per ORDER BY key among arg_types (the binder sets it)
};

// Aggregates whose result depends on the order of their input (array_agg,
// string_agg): the number of their own arguments. Their ORDER BY keys, when
// the call has them, come as more arguments after those (the binder appends
// them, and their directions to the signature's `order`); every other
// aggregate ignores ORDER BY.
std::optional<size_t> ordered_input_arity(const std::string& name);

// Resolves name(arg types) to an aggregate; throws 42883 when none matches.
// arg_types may be rewritten (casts the caller must apply, e.g. corr -> float8).
AggregateSignature resolve_aggregate(const std::string& name, std::vector<SqlType> arg_types, bool star,
                                     bool within_group);

// One group's running state in the generic path.
class Accumulator {
 public:
  virtual ~Accumulator() = default;
  // args are the aggregate's argument values for one row (already filtered).
  virtual void add(const Value* args) = 0;
  virtual Value result() const = 0;
  // Takes in `other`'s state (an accumulator of the same aggregate) as if
  // its rows had been added here after this one's, with the same result:
  // how rows accumulated on several threads come together. Only for
  // aggregates accumulators_merge() accepts.
  virtual void merge(const Accumulator& other);
};

// Whether make_accumulator(signature, distinct, ...)'s accumulators can
// merge() with the exact result of adding every row to one: counts, integer
// and numeric sums and averages (exact arithmetic, the result's scale the
// largest), min, max, bool_and and bool_or. Not floating-point sums and
// moments (their rounding depends on the order of additions), DISTINCT,
// ordered-set or order-sensitive aggregates, numeric variance.
bool accumulators_merge(const AggregateSignature& signature, bool distinct);
// Aggregates whose result does not depend on the order rows are added in
// (exact arithmetic): accumulators_merge's, and sums and averages of other
// exact inputs (interval). Float sums and moments are left out: PostgreSQL
// adds their rows in its order and the digits would differ.
bool order_insensitive(const AggregateSignature& signature);

// Creates an accumulator. `direct` is the ordered-set direct argument
// (percentile fraction) and `descending` the WITHIN GROUP order.
std::unique_ptr<Accumulator> make_accumulator(const AggregateSignature& signature, bool distinct,
                                              const Value& direct, bool descending);

}  // namespace tally::executor
