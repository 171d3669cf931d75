#include "executor/operators/dictionary_filter.hpp"

#include <algorithm>
#include <string_view>

#include "common/error.hpp"
#include "executor/plan_expressions.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {
namespace {

// Entries evaluated at a time: a column of millions of distinct texts is
// not copied into one Vector at once.
constexpr int32_t kSlice = 1 << 16;
// Entries any dictionary may have and still be tested per entry.
constexpr size_t kSmallDictionary = 1024;

// True when `e` reads no column but `space_index`, and every node is one
// whose value depends only on its inputs.
bool per_value(const Expr& e, int space_index) {
  if (dynamic_cast<const ConstExpr*>(&e) || dynamic_cast<const ParamExpr*>(&e)) return true;
  if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) return c->index == space_index;
  auto all = [space_index](const std::vector<ExprPtr>& args) {
    return std::all_of(args.begin(), args.end(), [space_index](const ExprPtr& a) { return a && per_value(*a, space_index); });
  };
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
    return !f->args.empty() && !volatile_function(f->name) && all(f->args);
  }
  if (const auto* b = dynamic_cast<const BoolExpr*>(&e)) return all(b->args);
  if (const auto* n = dynamic_cast<const NullTestExpr*>(&e)) return per_value(*n->arg, space_index);
  if (const auto* c = dynamic_cast<const CoalesceExpr*>(&e)) return all(c->args);
  if (const auto* in = dynamic_cast<const InListExpr*>(&e)) return per_value(*in->arg, space_index) && all(in->list);
  if (const auto* c = dynamic_cast<const CaseExpr*>(&e)) {
    for (const auto& [condition, value] : c->whens) {
      if (!per_value(*condition, space_index) || !per_value(*value, space_index)) return false;
    }
    return !c->otherwise || per_value(*c->otherwise, space_index);
  }
  return false;  // subqueries, outer references, window results
}

bool reads_column(const Expr& e, int space_index) {
  if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) return c->index == space_index;
  auto any = [space_index](const std::vector<ExprPtr>& args) {
    return std::any_of(args.begin(), args.end(), [space_index](const ExprPtr& a) { return a && reads_column(*a, space_index); });
  };
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) return any(f->args);
  if (const auto* b = dynamic_cast<const BoolExpr*>(&e)) return any(b->args);
  if (const auto* n = dynamic_cast<const NullTestExpr*>(&e)) return reads_column(*n->arg, space_index);
  if (const auto* c = dynamic_cast<const CoalesceExpr*>(&e)) return any(c->args);
  if (const auto* in = dynamic_cast<const InListExpr*>(&e)) return reads_column(*in->arg, space_index) || any(in->list);
  if (const auto* c = dynamic_cast<const CaseExpr*>(&e)) {
    for (const auto& [condition, value] : c->whens) {
      if (reads_column(*condition, space_index) || reads_column(*value, space_index)) return true;
    }
    return c->otherwise && reads_column(*c->otherwise, space_index);
  }
  return false;
}

}  // namespace

std::unique_ptr<DictionaryFilter> DictionaryFilter::plan(const Expr& conjunct, int space_index, SqlType type,
                                                         size_t space_width) {
  if (physical_of(type.id) != Physical::text) return nullptr;
  if (!per_value(conjunct, space_index) || !reads_column(conjunct, space_index)) return nullptr;
  return std::unique_ptr<DictionaryFilter>(new DictionaryFilter(conjunct, space_index, type, space_width));
}

bool DictionaryFilter::extend(const storage::StringDictionary& dictionary, int32_t size,
                              const std::vector<Value>* parameters, State& state) const {
  // The first slice also holds one NULL (the verdict of a NULL row).
  bool first = !state.verdicts_;
  auto verdicts = state.verdicts_ ? std::make_shared<std::vector<uint8_t>>(*state.verdicts_)
                                  : std::make_shared<std::vector<uint8_t>>();
  while (static_cast<int32_t>(verdicts->size()) < size || first) {
    const auto from = static_cast<int32_t>(verdicts->size());
    const int32_t to = std::min(size, from + kSlice);
    Vector values(type_);
    values.reserve(static_cast<size_t>(to - from) + 1);
    for (int32_t code = from; code < to; ++code) values.push(Value(std::string(dictionary.at(code))));
    if (first) values.push(Value(Null{}));
    EvalInput input;
    input.rows = values.size();
    input.parameters = parameters;
    input.columns.assign(space_width_, nullptr);
    input.columns[static_cast<size_t>(space_index_)] = &values;
    Vector verdict;
    try {
      verdict = conjunct_.evaluate(input);
    } catch (const Error&) {
      state.failed_ = true;
      return false;
    }
    auto passes = [&verdict](size_t i) -> uint8_t { return !verdict.null_at(i) && verdict.ints[i] != 0 ? 1 : 0; };
    for (int32_t code = from; code < to; ++code) verdicts->push_back(passes(static_cast<size_t>(code - from)));
    if (first) state.null_verdict_ = passes(static_cast<size_t>(to - from));
    first = false;
  }
  state.verdicts_ = std::move(verdicts);
  return true;
}

bool DictionaryFilter::select(const storage::ColumnVector& column, const std::vector<uint32_t>* kept, size_t rows,
                              const std::vector<Value>* parameters, State& state,
                              std::vector<uint32_t>& passing) const {
  if (!column.dictionary) return false;
  // Where most of a chunk's values are distinct (comments, names) the
  // dictionary holds as many entries as rows: evaluated per entry they would
  // be evaluated by one chunk at a time, not by every chunk in parallel.
  if (static_cast<size_t>(column.dictionary->size()) > std::max<size_t>(column.rows / 2, kSmallDictionary)) return false;
  std::shared_ptr<const std::vector<uint8_t>> taken;
  uint8_t null_verdict = 0;
  {
    const std::lock_guard lock(state.mutex_);
    if (state.failed_) return false;
    if (!state.verdicts_ || static_cast<int32_t>(state.verdicts_->size()) < column.dictionary->size()) {
      if (!extend(*column.dictionary, column.dictionary->size(), parameters, state)) return false;
    }
    taken = state.verdicts_;
    null_verdict = state.null_verdict_;
  }
  const uint8_t* verdicts = taken->data();
  const int32_t* codes = column.values<int32_t>();
  const uint8_t* valid = column.has_nulls() ? column.validity.data() : nullptr;
  // Branch-free: each row is written, and counted where it passes.
  passing.resize(rows);
  size_t n = 0;
  if (kept == nullptr && valid == nullptr) {
    for (size_t r = 0; r < rows; ++r) {
      passing[n] = static_cast<uint32_t>(r);
      n += verdicts[codes[r]] != 0;
    }
  } else {
    for (size_t j = 0; j < rows; ++j) {
      const size_t r = kept ? (*kept)[j] : j;
      passing[n] = static_cast<uint32_t>(j);
      n += (valid != nullptr && valid[r] == 0 ? null_verdict : verdicts[codes[r]]) != 0;
    }
  }
  passing.resize(n);
  return true;
}

}  // namespace tally::executor
