#include "executor/operators/dictionary_filter.hpp"

#include <algorithm>
#include <string_view>

#include "common/error.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/dictionary_entry_values.hpp"
#include "executor/plan_expressions.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {
namespace {

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

bool DictionaryFilter::extend(const std::shared_ptr<const storage::StringDictionary>& dictionary,
                              const std::vector<Value>* parameters, State& state) const {
  // The entries the verdicts lack (a chunk's dictionary is a prefix of the
  // newest), on every core; the first evaluation also gives the verdict of
  // a NULL row.
  const size_t from = state.verdicts_ ? state.verdicts_->size() : 0;
  const ColumnExpr column(type_, space_index_);
  const int threads = cpu::WorkerPool::shared().workers() + 1;
  std::optional<std::vector<uint8_t>> passes = entry_passes(conjunct_, column, dictionary, parameters, threads, from);
  if (!passes) {
    state.failed_ = true;
    return false;
  }
  auto verdicts = state.verdicts_ ? std::make_shared<std::vector<uint8_t>>(*state.verdicts_)
                                  : std::make_shared<std::vector<uint8_t>>();
  verdicts->insert(verdicts->end(), passes->begin(), passes->end() - 1);
  if (from == 0) state.null_verdict_ = passes->back();
  state.verdicts_ = std::move(verdicts);
  return true;
}

void DictionaryFilter::prepare(const std::shared_ptr<const storage::StringDictionary>& dictionary,
                               const std::vector<Value>* parameters, State& state) const {
  const std::lock_guard lock(state.mutex_);
  if (dictionary->size() > kMostEvaluatedEntries || state.failed_ || state.verdicts_) return;
  extend(dictionary, parameters, state);
}

bool DictionaryFilter::verdicts_kept(const storage::StringDictionary& dictionary) const {
  return entry_conditions_kept(conjunct_, ColumnExpr(type_, space_index_), dictionary);
}

bool DictionaryFilter::verdicts_keepable() const {
  return entry_conditions_keepable(conjunct_, ColumnExpr(type_, space_index_));
}

bool DictionaryFilter::select(const storage::ColumnVector& column, const std::vector<uint32_t>* kept, size_t rows,
                              const std::vector<Value>* parameters, State& state,
                              std::vector<uint32_t>& passing) const {
  if (!column.dictionary) return false;
  // Where most of a chunk's values are distinct (comments, names) the
  // dictionary holds as many entries as rows: evaluated per entry they would
  // be evaluated by one chunk at a time, not by every chunk in parallel.
  // (Verdicts made up front, by prepare(), on every core, serve any size.)
  const bool small = static_cast<size_t>(column.dictionary->size()) <= std::max<size_t>(column.rows / 2, kSmallDictionary);
  std::shared_ptr<const std::vector<uint8_t>> taken;
  uint8_t null_verdict = 0;
  {
    const std::lock_guard lock(state.mutex_);
    if (state.failed_) return false;
    if (!state.verdicts_ || static_cast<int32_t>(state.verdicts_->size()) < column.dictionary->size()) {
      if (!small || !extend(column.dictionary, parameters, state)) return false;
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
