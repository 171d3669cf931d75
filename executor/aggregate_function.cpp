#include "executor/aggregate_function.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <unordered_set>

#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "executor/cancel_point.hpp"
#include "executor/array_text.hpp"
#include "executor/finalize.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {
namespace {

Error no_aggregate(const std::string& name, const std::vector<SqlType>& args) {
  std::string sig = name + "(";
  for (size_t i = 0; i < args.size(); ++i) sig += (i ? ", " : "") + format_type(args[i]);
  return Error(SqlState::undefined_function, "function " + sig + ") does not exist")
      .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.");
}

bool is_number(TypeId id) { return is_numeric_kind(id); }

struct ValueHash {
  size_t operator()(const Value& v) const { return hash_value(v); }
};
struct ValueEq {
  bool operator()(const Value& a, const Value& b) const { return values_equal(a, b); }
};

class CountAcc final : public Accumulator {
 public:
  explicit CountAcc(bool star) : star_(star) {}
  void add(const Value* args) override {
    if (star_ || !is_null(args[0])) ++n_;
  }
  Value result() const override { return n_; }
  void merge(const Accumulator& other) override { n_ += static_cast<const CountAcc&>(other).n_; }

 private:
  bool star_;
  int64_t n_ = 0;
};

class SumAcc final : public Accumulator {
 public:
  SumAcc(TypeId input, bool avg) : input_(input), avg_(avg) {}
  void add(const Value* args) override {
    if (is_null(args[0])) return;
    ++count_;
    if (is_integer(input_)) int_sum_ += std::get<int64_t>(args[0]);
    else if (input_ == TypeId::numeric) num_sum_ = num_sum_ + std::get<Numeric>(args[0]);
    else if (avg_) moments_.add(std::get<double>(args[0]));
    else if (input_ == TypeId::float4) f4_sum_ = static_cast<float>(f4_sum_ + static_cast<float>(std::get<double>(args[0])));
    else f_sum_ += std::get<double>(args[0]);
  }
  Value result() const override {
    if (count_ == 0) return Null{};
    if (avg_) {
      if (is_integer(input_)) return finalize_avg_numeric(Numeric{int_sum_, 0}, count_);
      if (input_ == TypeId::numeric) return finalize_avg_numeric(num_sum_, count_);
      return finalize_float_avg(moments_);
    }
    if (is_integer(input_)) return finalize_sum_int(int_sum_, count_, input_ == TypeId::int8);
    if (input_ == TypeId::numeric) return num_sum_;
    if (input_ == TypeId::float4) {
      if (std::isinf(f4_sum_)) {}
      return static_cast<double>(f4_sum_);
    }
    return f_sum_;
  }
  // Integers and numerics only (accumulators_merge): exact, so the order
  // of the parts does not matter.
  void merge(const Accumulator& other) override {
    const auto& o = static_cast<const SumAcc&>(other);
    if (o.count_ == 0) return;
    count_ += o.count_;
    if (is_integer(input_)) int_sum_ += o.int_sum_;
    else num_sum_ = num_sum_ + o.num_sum_;
  }

 private:
  TypeId input_;
  bool avg_;
  int64_t count_ = 0;
  __int128 int_sum_ = 0;
  Numeric num_sum_;
  double f_sum_ = 0;
  float f4_sum_ = 0;
  FloatMoments moments_;
};

class MinMaxAcc final : public Accumulator {
 public:
  explicit MinMaxAcc(bool max) : max_(max) {}
  void add(const Value* args) override {
    if (is_null(args[0])) return;
    if (is_null(best_)) { best_ = args[0]; return; }
    const int c = compare_values(args[0], best_);
    if (max_ ? c > 0 : c < 0) best_ = args[0];
  }
  Value result() const override { return best_; }
  // As adding other's best: of equal values the earlier part's stays, as
  // the earlier row's does in add().
  void merge(const Accumulator& other) override { add(&static_cast<const MinMaxAcc&>(other).best_); }

 private:
  bool max_;
  Value best_ = Null{};
};

class BoolAcc final : public Accumulator {
 public:
  explicit BoolAcc(bool is_and) : and_(is_and) {}
  void add(const Value* args) override {
    if (is_null(args[0])) return;
    const bool v = std::get<bool>(args[0]);
    state_ = seen_ ? (and_ ? (state_ && v) : (state_ || v)) : v;
    seen_ = true;
  }
  Value result() const override {
    if (!seen_) return Null{};
    return state_;
  }
  void merge(const Accumulator& other) override {
    const auto& o = static_cast<const BoolAcc&>(other);
    if (!o.seen_) return;
    state_ = seen_ ? (and_ ? (state_ && o.state_) : (state_ || o.state_)) : o.state_;
    seen_ = true;
  }

 private:
  bool and_;
  bool seen_ = false;
  bool state_ = false;
};

class VarianceAcc final : public Accumulator {
 public:
  VarianceAcc(TypeId input, bool sample, bool stddev) : input_(input), sample_(sample), stddev_(stddev) {}
  void add(const Value* args) override {
    if (is_null(args[0])) return;
    if (is_float(input_)) { moments_.add(std::get<double>(args[0])); return; }
    const Numeric x = is_integer(input_) ? Numeric::from_int(std::get<int64_t>(args[0])) : std::get<Numeric>(args[0]);
    // Moments of x - first value: N*sum(d^2) - sum(d)^2 equals N*sum(x^2) -
    // sum(x)^2 exactly, but d^2 stays within 38 digits where x^2 would not
    // (values near 1e20 whose variance is small, or 0 when all are equal).
    if (count_++ == 0) shift_ = x;
    const Numeric d = x - shift_;
    sum_ = sum_ + d;
    sum2_ = sum2_ + d * d;
  }
  Value result() const override {
    if (is_float(input_)) return finalize_float_variance(moments_, sample_, stddev_);
    return finalize_numeric_variance(count_, sum_, sum2_, sample_, stddev_);
  }

 private:
  TypeId input_;
  bool sample_, stddev_;
  int64_t count_ = 0;
  Numeric sum_, sum2_, shift_;
  FloatMoments moments_;
};

class RegressionAcc final : public Accumulator {
 public:
  RegressionAcc(AggKind kind) : kind_(kind) {}
  void add(const Value* args) override {
    if (is_null(args[0]) || is_null(args[1])) return;
    m_.add(std::get<double>(args[0]), std::get<double>(args[1]));
  }
  Value result() const override {
    switch (kind_) {
      case AggKind::regr_count: return static_cast<int64_t>(m_.n);
      case AggKind::corr: return finalize_regression(m_, RegressionFinal::corr);
      case AggKind::covar_pop: return finalize_regression(m_, RegressionFinal::covar_pop);
      case AggKind::covar_samp: return finalize_regression(m_, RegressionFinal::covar_samp);
      case AggKind::regr_r2: return finalize_regression(m_, RegressionFinal::r2);
      case AggKind::regr_slope: return finalize_regression(m_, RegressionFinal::slope);
      case AggKind::regr_intercept: return finalize_regression(m_, RegressionFinal::intercept);
      case AggKind::regr_sxx: return finalize_regression(m_, RegressionFinal::sxx);
      case AggKind::regr_syy: return finalize_regression(m_, RegressionFinal::syy);
      case AggKind::regr_sxy: return finalize_regression(m_, RegressionFinal::sxy);
      case AggKind::regr_avgx: return finalize_regression(m_, RegressionFinal::avgx);
      default: return finalize_regression(m_, RegressionFinal::avgy);
    }
  }

 private:
  AggKind kind_;
  FloatMoments2 m_;
};

// A copy of v whose string, if any, is made before the variant that holds
// it: when the string's allocation fails inside std::variant's copy
// constructor, libstdc++ 12 leaves the variant's index unset and its
// destructor crashes the server; made outside, the bad_alloc propagates and
// answers 53200.
Value copy_value(const Value& v) {
  if (const auto* text = std::get_if<std::string>(&v)) {
    std::string copy(*text);
    return Value(std::move(copy));
  }
  return v;
}

// Ordered-set aggregates: collect, sort, pick (PostgreSQL's orderedsetaggs.c).
class OrderedSetAcc final : public Accumulator {
 public:
  OrderedSetAcc(AggKind kind, Value direct, bool descending)
      : kind_(kind), direct_(std::move(direct)), descending_(descending) {}
  void add(const Value* args) override {
    if (is_null(args[0])) return;
    kept_.add();
    values_.push_back(copy_value(args[0]));
  }
  Value result() const override {
    // PostgreSQL checks the fraction before it looks at the rows: a group
    // without any still fails on a fraction out of range.
    if (kind_ != AggKind::mode) {
      if (is_null(direct_)) return Null{};
      if (kind_ != AggKind::ordered_nth) check_percentile(std::get<double>(direct_));
    }
    if (values_.empty()) return Null{};
    std::vector<Value> sorted = values_;
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) {
      const int c = compare_values(a, b);
      return descending_ ? c > 0 : c < 0;
    });
    if (kind_ == AggKind::mode) {
      Value best = sorted[0];
      size_t best_count = 0, run = 0;
      for (size_t i = 0; i < sorted.size(); ++i) {
        run = (i > 0 && compare_values(sorted[i], sorted[i - 1]) == 0) ? run + 1 : 1;
        if (run > best_count) { best_count = run; best = sorted[i]; }
      }
      return best;
    }
    if (kind_ == AggKind::ordered_nth) {
      const auto at = static_cast<size_t>(std::get<int64_t>(direct_));
      return at < sorted.size() ? sorted[at] : Value{Null{}};
    }
    const double p = std::get<double>(direct_);
    if (kind_ == AggKind::percentile_disc) return sorted[percentile_disc_position(p, sorted.size())];
    return percentile_cont_of(p, sorted.size(), [&](size_t i) { return std::get<double>(sorted[i]); });
  }
 private:
  AggKind kind_;
  Value direct_;
  bool descending_;
  std::vector<Value> values_;
  // Against the statement's memory budget: the vector's doubling holds up
  // to twice its values, and the sort a copy (a text value's characters are
  // not counted).
  BlockReservation kept_{3 * sizeof(Value)};
};

// ORDER BY's comparison of two values: NULL after every other value.
int compare_nulls_last(const Value& a, const Value& b) {
  const bool na = is_null(a), nb = is_null(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  return compare_values(a, b);
}

// The input of an aggregate whose result depends on its order (array_agg,
// string_agg): each row's item kept with the row's ORDER BY keys, handed back
// sorted stably by them (NULL after every value unless NULLS FIRST, which DESC
// implies, as ORDER BY does); without keys, in the order the rows came.
template <class Item>
class OrderedInput {
 public:
  explicit OrderedInput(std::vector<AggregateOrderKey> order) : order_(std::move(order)) {}
  // `keys` holds the row's ORDER BY values, one per key.
  void add(Item item, const Value* keys) {
    kept_.add();
    std::vector<Value> row_keys;
    row_keys.reserve(order_.size());
    for (size_t k = 0; k < order_.size(); ++k) row_keys.push_back(copy_value(keys[k]));
    rows_.push_back({std::move(item), std::move(row_keys)});
  }
  bool empty() const { return rows_.empty(); }
  std::vector<const Item*> in_order() const {
    std::vector<const Row*> order;
    order.reserve(rows_.size());
    for (const auto& r : rows_) order.push_back(&r);
    if (!order_.empty()) {
      std::stable_sort(order.begin(), order.end(), [&](const Row* a, const Row* b) {
        for (size_t k = 0; k < order_.size(); ++k) {
          const Value &x = a->keys[k], &y = b->keys[k];
          const bool nx = is_null(x), ny = is_null(y);
          if (nx || ny) {
            if (nx == ny) continue;
            return nx == order_[k].nulls_first;
          }
          const int c = compare_values(x, y);
          if (c != 0) return order_[k].descending ? c > 0 : c < 0;
        }
        return false;
      });
    }
    std::vector<const Item*> items;
    items.reserve(order.size());
    for (const Row* r : order) items.push_back(&r->item);
    return items;
  }

 private:
  struct Row {
    Item item;
    std::vector<Value> keys;
  };
  std::vector<AggregateOrderKey> order_;
  std::vector<Row> rows_;
  // Against the statement's memory budget: the vector's doubling holds up
  // to twice its rows, and in_order() a pointer each (a text value's
  // characters are not counted).
  BlockReservation kept_{3 * sizeof(Row)};
};

// array_agg(value [ORDER BY keys]): oid[] of oids, name[] of names, else text[] of the values'
// text forms (the engine's arrays). No rows: NULL.
class ArrayAggAcc final : public Accumulator {
 public:
  ArrayAggAcc(SqlType input, std::vector<AggregateOrderKey> order) : input_(input), rows_(std::move(order)) {}
  void add(const Value* args) override {
    rows_.add(is_null(args[0]) ? std::nullopt : std::optional<std::string>(value_to_text(input_, args[0])), args + 1);
  }
  Value result() const override {
    if (rows_.empty()) return Null{};
    std::vector<std::optional<std::string>> elements;
    for (const auto* e : rows_.in_order()) elements.push_back(*e);
    return array_literal(elements);
  }

 private:
  SqlType input_;
  OrderedInput<std::optional<std::string>> rows_;
};

// string_agg(value, delimiter [ORDER BY keys]) of text or bytea (PostgreSQL's
// string_agg_transfn and bytea_string_agg_transfn): NULL values are skipped, a NULL delimiter adds
// nothing, the first value's delimiter is dropped. No non-NULL value: NULL.
class StringAggAcc final : public Accumulator {
 public:
  explicit StringAggAcc(std::vector<AggregateOrderKey> order) : rows_(std::move(order)) {}
  void add(const Value* args) override {
    if (is_null(args[0])) return;
    Piece piece{std::get<std::string>(args[0]),
                is_null(args[1]) ? std::nullopt : std::optional<std::string>(std::get<std::string>(args[1]))};
    rows_.add(std::move(piece), args + 2);
  }
  Value result() const override {
    if (rows_.empty()) return Null{};
    std::string out;
    bool first = true;
    for (const Piece* p : rows_.in_order()) {
      if (!first && p->delimiter) out += *p->delimiter;
      out += p->value;
      first = false;
    }
    return out;
  }

 private:
  struct Piece {
    std::string value;
    std::optional<std::string> delimiter;
  };
  OrderedInput<Piece> rows_;
};

// The distinct values of one DISTINCT aggregate. One hash set while small;
// past kSplitAt values, kShards sets chosen by hash bits the sets do not use
// for buckets: growing one set of millions of values rehashes it at once, for
// seconds on end with no cancellation check, where a shard's rehash is short.
class DistinctSet {
 public:
  bool insert(const Value& v) {
    Set& set = shards_.empty() ? small_ : shards_[shard_of(v)];
    if (set.find(v) != set.end()) return false;
    set.insert(copy_value(v));
    if (shards_.empty() && small_.size() > kSplitAt) split();
    return true;
  }

 private:
  using Set = std::unordered_set<Value, ValueHash, ValueEq>;
  static constexpr size_t kSplitAt = 1 << 16;
  static constexpr int kShardBits = 6;

  static size_t shard_of(const Value& v) {
    return static_cast<size_t>((ValueHash{}(v) * 0x9E3779B97F4A7C15ULL) >> (64 - kShardBits));
  }
  void split() {
    shards_.resize(size_t{1} << kShardBits);
    while (!small_.empty()) {
      auto node = small_.extract(small_.begin());  // moves the value, never copies it
      shards_[shard_of(node.value())].insert(std::move(node));
    }
  }

  Set small_;
  std::vector<Set> shards_;
};

// DISTINCT: feeds each distinct argument value once, in ascending order
// (NULL last), as PostgreSQL does (it sorts DISTINCT aggregate input), so
// that float accumulation happens in the same order and gives the same
// digits. An aggregate of several arguments (string_agg's value and
// delimiter, an ORDER BY key) is distinct over all of them, sorted by them in
// turn; the inner accumulator's stable sort by its ORDER BY key then gives
// PostgreSQL's order (the key first, the other arguments after it). A row
// whose first argument is NULL is dropped unless the aggregate keeps NULLs
// (array_agg): every other one ignores it anyway.
class DistinctAcc final : public Accumulator {
 public:
  using Factory = std::function<std::unique_ptr<Accumulator>()>;
  DistinctAcc(size_t arity, bool keeps_nulls, Factory inner_factory)
      : arity_(arity), keeps_nulls_(keeps_nulls), inner_factory_(std::move(inner_factory)),
        tuples_kept_(arity * sizeof(Value) + 64) {}
  void add(const Value* args) override {
    if (is_null(args[0]) && !keeps_nulls_) return;
    if (arity_ > 1) {
      std::vector<Value> tuple;
      tuple.reserve(arity_);
      for (size_t i = 0; i < arity_; ++i) tuple.push_back(copy_value(args[i]));
      if (tuples_.insert(std::move(tuple)).second) tuples_kept_.add();
      return;
    }
    if (!seen_.insert(args[0])) return;
    kept_.add();
    values_.push_back(copy_value(args[0]));
  }
  Value result() const override {
    // Millions of distinct values take seconds to copy, sort and feed: cancellable.
    CancelTicker ticker;
    auto fresh = inner_factory_();
    if (arity_ > 1) {
      for (const auto& tuple : tuples_) {
        ticker.tick();
        fresh->add(tuple.data());
      }
      return fresh->result();
    }
    std::vector<Value> sorted;
    sorted.reserve(values_.size());
    for (const auto& v : values_) {
      ticker.tick();
      sorted.push_back(copy_value(v));
    }
    std::sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) {
      ticker.tick();
      return compare_nulls_last(a, b) < 0;
    });
    for (const auto& v : sorted) {
      ticker.tick();
      fresh->add(&v);
    }
    return fresh->result();
  }

 private:
  struct TupleLess {
    bool operator()(const std::vector<Value>& a, const std::vector<Value>& b) const {
      for (size_t i = 0; i < a.size(); ++i) {
        if (const int c = compare_nulls_last(a[i], b[i])) return c < 0;
      }
      return false;
    }
  };
  size_t arity_;
  bool keeps_nulls_;
  Factory inner_factory_;
  DistinctSet seen_;
  // A deque: growing never moves millions of values at once.
  std::deque<Value> values_;
  // Against the statement's memory budget: the set's node (value, hash,
  // link, allocator header) and bucket, the deque's copy, and result()'s
  // sorted copy.
  BlockReservation kept_{3 * sizeof(Value) + 40};
  // Several arguments: one ordered set of tuples, which sorts as it
  // deduplicates (a tree's node and its tuple's values).
  std::set<std::vector<Value>, TupleLess> tuples_;
  BlockReservation tuples_kept_;
};

}  // namespace

std::optional<size_t> ordered_input_arity(const std::string& name) {
  if (name == "array_agg") return 1;
  if (name == "string_agg") return 2;
  return std::nullopt;
}

AggregateSignature resolve_aggregate(const std::string& name, std::vector<SqlType> args, bool star,
                                     bool within_group) {
  AggregateSignature s;
  auto one = [&](bool ok) {
    if (args.size() != 1 || !ok) throw no_aggregate(name, args);
  };
  auto input = [&] { return args.empty() ? TypeId::unknown : args[0].id; };
  if (name == "count") {
    if (star) { s.kind = AggKind::count_star; s.result_type = {TypeId::int8}; return s; }
    one(true);
    s.kind = AggKind::count;
    s.arg_types = args;
    s.result_type = {TypeId::int8};
    return s;
  }
  if (star) throw Error(SqlState::wrong_object_type, name + "(*) must be used to call a parameterless aggregate function");
  if (within_group != (name == "percentile_cont" || name == "percentile_disc" || name == "mode")) {
    if (within_group) throw Error(SqlState::wrong_object_type, "WITHIN GROUP is specified, but " + name + " is not an ordered-set aggregate");
    throw Error(SqlState::wrong_object_type, "WITHIN GROUP is required for ordered-set aggregate " + name);
  }
  if (name == "sum" || name == "avg") {
    one(true);
    if (input() == TypeId::unknown) args[0] = {TypeId::float8};
    const TypeId t = args[0].id;
    if (!is_number(t)) throw no_aggregate(name, args);
    s.kind = name == "sum" ? AggKind::sum : AggKind::avg;
    s.arg_types = {{t}};
    if (s.kind == AggKind::sum) {
      s.result_type = (t == TypeId::int2 || t == TypeId::int4) ? SqlType{TypeId::int8}
                    : (t == TypeId::int8 || t == TypeId::numeric) ? SqlType{TypeId::numeric} : SqlType{t};
    } else {
      s.result_type = is_float(t) ? SqlType{TypeId::float8} : SqlType{TypeId::numeric};
    }
    return s;
  }
  if (name == "min" || name == "max") {
    one(true);
    TypeId t = input();
    if (t == TypeId::unknown || t == TypeId::varchar || t == TypeId::name) t = TypeId::text;
    if (t == TypeId::bytea) throw no_aggregate(name, args);  // PostgreSQL 15 has no min/max(bytea)
    s.kind = name == "min" ? AggKind::min : AggKind::max;
    s.arg_types = {{t}};
    s.result_type = {t};
    return s;
  }
  if (name == "bool_and" || name == "bool_or" || name == "every") {
    one(input() == TypeId::boolean || input() == TypeId::unknown);
    s.kind = name == "bool_or" ? AggKind::bool_or : AggKind::bool_and;
    s.arg_types = {{TypeId::boolean}};
    s.result_type = {TypeId::boolean};
    return s;
  }
  if (name == "variance" || name == "var_samp" || name == "var_pop" || name == "stddev" || name == "stddev_samp" ||
      name == "stddev_pop") {
    one(true);
    if (input() == TypeId::unknown) args[0] = {TypeId::float8};
    TypeId t = args[0].id;
    if (!is_number(t)) throw no_aggregate(name, args);
    if (t == TypeId::float4) t = TypeId::float8;
    s.kind = (name == "variance" || name == "var_samp") ? AggKind::var_samp
           : name == "var_pop" ? AggKind::var_pop
           : name == "stddev_pop" ? AggKind::stddev_pop : AggKind::stddev_samp;
    s.arg_types = {{t}};
    s.result_type = is_float(t) ? SqlType{TypeId::float8} : SqlType{TypeId::numeric};
    return s;
  }
  static const std::pair<const char*, AggKind> regression[] = {
      {"corr", AggKind::corr}, {"covar_pop", AggKind::covar_pop}, {"covar_samp", AggKind::covar_samp},
      {"regr_r2", AggKind::regr_r2}, {"regr_slope", AggKind::regr_slope}, {"regr_intercept", AggKind::regr_intercept},
      {"regr_count", AggKind::regr_count}, {"regr_sxx", AggKind::regr_sxx}, {"regr_syy", AggKind::regr_syy},
      {"regr_sxy", AggKind::regr_sxy}, {"regr_avgx", AggKind::regr_avgx}, {"regr_avgy", AggKind::regr_avgy}};
  for (const auto& [n, kind] : regression) {
    if (name != n) continue;
    if (args.size() != 2) throw no_aggregate(name, args);
    for (const auto& a : args) {
      if (!is_number(a.id) && a.id != TypeId::unknown) throw no_aggregate(name, args);
    }
    s.kind = kind;
    s.arg_types = {{TypeId::float8}, {TypeId::float8}};
    s.result_type = kind == AggKind::regr_count ? SqlType{TypeId::int8} : SqlType{TypeId::float8};
    return s;
  }
  if (name == "percentile_cont") {
    // args: sort expression; the fraction is the direct argument (float8).
    one(is_number(input()) || input() == TypeId::unknown);
    s.kind = AggKind::percentile_cont;
    s.arg_types = {{TypeId::float8}};
    s.result_type = {TypeId::float8};
    return s;
  }
  if (name == "array_agg" && !args.empty()) {
    // Arguments after the first are ORDER BY keys (select_plan.cpp passes them so).
    if (input() == TypeId::unknown) args[0] = {TypeId::text};
    s.kind = AggKind::array_agg;
    s.arg_types = args;
    // PostgreSQL's array type of the input where Tally has it (clients parse
    // int and text arrays, and leave name[] to the caller, as sequelize expects).
    s.result_type = {args[0].id == TypeId::oid ? TypeId::oid_array
                     : args[0].id == TypeId::name ? TypeId::name_array : TypeId::text_array};
    if (is_array_type(args[0].id)) throw Error(SqlState::feature_not_supported, "array_agg of arrays is not supported");
    return s;
  }
  if (name == "string_agg" && args.size() >= 2) {
    // string_agg(text, text); the types that cast to text implicitly come
    // cast. Arguments after the second are ORDER BY keys. string_agg(bytea,
    // bytea) joins bytes the same way.
    if (args[0].id == TypeId::bytea && (args[1].id == TypeId::bytea || args[1].id == TypeId::unknown)) {
      args[0] = args[1] = {TypeId::bytea};
      s.kind = AggKind::string_agg;
      s.arg_types = args;
      s.result_type = {TypeId::bytea};
      return s;
    }
    auto textual = [](TypeId t) {
      return t == TypeId::text || t == TypeId::unknown || t == TypeId::varchar || t == TypeId::bpchar ||
             t == TypeId::name || t == TypeId::char_;
    };
    if (!textual(args[0].id) || !textual(args[1].id)) throw no_aggregate(name, {args[0], args[1]});
    args[0] = args[1] = {TypeId::text};
    s.kind = AggKind::string_agg;
    s.arg_types = args;
    s.result_type = {TypeId::text};
    return s;
  }
  if (name == "percentile_disc" || name == "mode") {
    one(true);
    TypeId t = input() == TypeId::unknown ? TypeId::text : input();
    s.kind = name == "mode" ? AggKind::mode : AggKind::percentile_disc;
    s.arg_types = {{t}};
    s.result_type = {t};
    if (args[0].typmod >= 0) s.arg_types[0] = args[0], s.result_type = args[0];
    return s;
  }
  throw Error(SqlState::feature_not_supported, "aggregate " + name + " is not supported");
}

void Accumulator::merge(const Accumulator& /*other*/) {
  throw Error(SqlState::internal_error, "this aggregate's accumulators do not merge");
}

bool order_insensitive(const AggregateSignature& s) {
  switch (s.kind) {
    case AggKind::count_star:
    case AggKind::count:
    case AggKind::min:
    case AggKind::max:
    case AggKind::bool_and:
    case AggKind::bool_or: return true;
    case AggKind::sum:
    case AggKind::avg: return !s.arg_types.empty() && !is_float(s.arg_types[0].id);
    default: return false;
  }
}

bool accumulators_merge(const AggregateSignature& s, bool distinct) {
  if (distinct || !order_insensitive(s)) return false;
  // Of those, sums and averages merge over integers and numerics only.
  if (s.kind != AggKind::sum && s.kind != AggKind::avg) return true;
  const TypeId input = s.arg_types[0].id;
  return is_integer(input) || input == TypeId::numeric;
}

std::unique_ptr<Accumulator> make_accumulator(const AggregateSignature& s, bool distinct, const Value& direct,
                                              bool descending) {
  if (distinct) {
    return std::make_unique<DistinctAcc>(std::max<size_t>(s.arg_types.size(), 1), s.kind == AggKind::array_agg,
                                         [s, direct, descending] { return make_accumulator(s, false, direct, descending); });
  }
  std::unique_ptr<Accumulator> acc;
  const TypeId input = s.arg_types.empty() ? TypeId::unknown : s.arg_types[0].id;
  switch (s.kind) {
    case AggKind::count_star: acc = std::make_unique<CountAcc>(true); break;
    case AggKind::count: acc = std::make_unique<CountAcc>(false); break;
    case AggKind::sum: acc = std::make_unique<SumAcc>(input, false); break;
    case AggKind::avg: acc = std::make_unique<SumAcc>(input, true); break;
    case AggKind::min: acc = std::make_unique<MinMaxAcc>(false); break;
    case AggKind::max: acc = std::make_unique<MinMaxAcc>(true); break;
    case AggKind::bool_and: acc = std::make_unique<BoolAcc>(true); break;
    case AggKind::bool_or: acc = std::make_unique<BoolAcc>(false); break;
    case AggKind::var_samp: acc = std::make_unique<VarianceAcc>(input, true, false); break;
    case AggKind::var_pop: acc = std::make_unique<VarianceAcc>(input, false, false); break;
    case AggKind::stddev_samp: acc = std::make_unique<VarianceAcc>(input, true, true); break;
    case AggKind::stddev_pop: acc = std::make_unique<VarianceAcc>(input, false, true); break;
    case AggKind::percentile_cont:
    case AggKind::percentile_disc:
    case AggKind::ordered_nth:
    case AggKind::mode: acc = std::make_unique<OrderedSetAcc>(s.kind, direct, descending); break;
    case AggKind::array_agg: acc = std::make_unique<ArrayAggAcc>(s.arg_types[0], s.order); break;
    case AggKind::string_agg: acc = std::make_unique<StringAggAcc>(s.order); break;
    default: acc = std::make_unique<RegressionAcc>(s.kind); break;
  }
  return acc;
}

}  // namespace tally::executor
