#include "executor/dictionary_entry_values.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/entry_result_cache.hpp"

namespace tally::executor {
namespace {

// Entries per slice: enough that a task's set-up is nothing beside it
// (a slice of simple text functions takes about a millisecond), few enough
// that a dictionary of a million or two keeps every core of a large host
// busy to the end (at 2^16 entries, 23 slices over 16 threads took two
// rounds, the second half empty).
constexpr size_t kSliceEntries = size_t{1} << 14;

// Evaluates `e` over the rows [from, n], row i < n being entry i and row n
// a NULL (n = dictionary->size()), in slices: take(begin, values) receives
// rows [begin, begin + values.count) of the result, on the thread that
// evaluated them (slices are disjoint). False where the evaluation raised
// an error.
bool evaluate_on_entries(const Expr& e, const ColumnExpr& column,
                         const std::shared_ptr<const storage::StringDictionary>& dictionary,
                         const std::vector<Value>* parameters, int threads,
                         const std::function<void(size_t begin, const Vector& values)>& take, size_t from = 0) {
  const auto n = static_cast<size_t>(dictionary->size());
  const size_t rows = n + 1;
  const size_t slices = (rows - from + kSliceEntries - 1) / kSliceEntries;
  std::atomic<bool> raised{false};
  cpu::parallel_tasks(std::max(threads, 1), slices, [&](int, size_t slice) {
    if (raised.load(std::memory_order_relaxed)) return;
    const size_t begin = from + slice * kSliceEntries;
    const size_t end = std::min(rows, begin + kSliceEntries);
    Vector entries(column.type);
    entries.dictionary = dictionary;
    entries.count = end - begin;
    entries.codes.resize(entries.count, 0);
    entries.nulls.assign(entries.count, 0);
    for (size_t i = begin; i < end; ++i) {
      if (i == n) entries.nulls[i - begin] = 1;
      else entries.codes[i - begin] = static_cast<int32_t>(i);
    }
    EvalInput input;
    input.rows = entries.count;
    input.columns.assign(static_cast<size_t>(column.index) + 1, nullptr);
    input.columns[static_cast<size_t>(column.index)] = &entries;
    input.parameters = parameters;
    Vector values;
    try {
      values = e.evaluate(input);
    } catch (const Error&) {
      raised = true;
      return;
    }
    if (values.count != entries.count) {
      raised = true;
      return;
    }
    take(begin, values);
  });
  return !raised.load();
}

// A lookup column over the first n entries of `array` (width), with
// `validity` where some entry is NULL.
template <typename T>
EntryLookup lookup_of(std::shared_ptr<std::vector<T>> array, ColumnWidth width, size_t n,
                      std::shared_ptr<const std::vector<uint8_t>> validity, bool nulls) {
  EntryLookup out;
  out.column.data = array->data();
  out.column.validity = nulls ? validity->data() : nullptr;
  out.column.width = static_cast<uint8_t>(width);
  out.column.size = n;
  out.arrays.push_back(std::move(array));
  if (nulls) out.arrays.push_back(std::move(validity));
  return out;
}

std::optional<EntryResult> result_of(std::optional<EntryLookup> lookup) {
  if (!lookup) return std::nullopt;
  return EntryResult{std::move(lookup), {}};
}

// The lookup of a kept result (its arrays shared, not copied).
std::optional<EntryLookup> lookup_in(const std::shared_ptr<const EntryResult>& result) {
  if (!result) return std::nullopt;
  return result->lookup;
}

// A condition's value on the entries [from, n) and then on NULL (n =
// dictionary->size()): kFalse, kTrue or kNull each.
constexpr uint8_t kFalse = 0, kTrue = 1, kNull = 2;

std::optional<std::vector<uint8_t>> compute_entry_truths(const Expr& e, const ColumnExpr& column,
                                                         const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                                         const std::vector<Value>* parameters, int threads, size_t from) {
  const auto n = static_cast<size_t>(dictionary->size());
  std::vector<uint8_t> truths(n + 1 - std::min(from, n), kFalse);
  const bool evaluated = evaluate_on_entries(e, column, dictionary, parameters, threads, [&](size_t begin, const Vector& v) {
    for (size_t i = 0; i < v.count; ++i) {
      truths[begin + i - from] = v.null_at(i) ? kNull : v.int_data()[i] != 0 ? kTrue : kFalse;
    }
  }, from);
  if (!evaluated) return std::nullopt;
  return truths;
}

// compute_entry_truths of every entry, kept for the statements after.
std::shared_ptr<const EntryResult> entry_truths(const Expr& e, const ColumnExpr& column,
                                        const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                        const std::vector<Value>* parameters, int threads) {
  return cached_entry_result(EntryResultKind::conditions, e, column, *dictionary, [&] {
    std::optional<std::vector<uint8_t>> truths = compute_entry_truths(e, column, dictionary, parameters, threads, 0);
    return truths ? std::optional<EntryResult>(EntryResult{std::nullopt, std::move(*truths)}) : std::nullopt;
  });
}

std::optional<EntryLookup> compute_entry_values(const Expr& e, const ColumnExpr& column,
                                        const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                        const std::vector<Value>* parameters, int threads) {
  const auto n = static_cast<size_t>(dictionary->size());
  const bool floating = e.type.id == TypeId::float8;
  auto ints = std::make_shared<std::vector<int64_t>>(floating ? 0 : n + 1, 0);
  auto floats = std::make_shared<std::vector<double>>(floating ? n + 1 : 0, 0.0);
  auto validity = std::make_shared<std::vector<uint8_t>>(n + 1, 1);
  std::atomic<bool> strict{true}, nulls{false};
  const bool evaluated = evaluate_on_entries(e, column, dictionary, parameters, threads, [&](size_t begin, const Vector& v) {
    for (size_t i = 0; i < v.count; ++i) {
      const size_t at = begin + i;
      if (v.null_at(i)) {
        (*validity)[at] = 0;
        if (at < n) nulls = true;
      } else if (at == n) {
        strict = false;
      } else if (floating) {
        (*floats)[at] = v.floats[i];
      } else {
        (*ints)[at] = v.int_data()[i];
      }
    }
  });
  if (!evaluated || !strict) return std::nullopt;
  if (floating) return lookup_of(floats, ColumnWidth::float64, n, validity, nulls);
  return lookup_of(ints, ColumnWidth::int64, n, validity, nulls);
}

std::optional<EntryLookup> compute_entry_text_codes(const Expr& e, const ColumnExpr& column,
                                            const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                            const std::vector<Value>* parameters, int threads) {
  const auto n = static_cast<size_t>(dictionary->size());
  // Each slice's results coded among its own distinct ones, on its thread;
  // the distinct ones are then coded in one dictionary.
  struct Slice {
    size_t begin = 0;
    Vector values;
    std::vector<int32_t> local;  // -1: NULL
    std::vector<std::string_view> distinct;
  };
  std::vector<Slice> slices;
  std::mutex slices_mutex;
  std::atomic<bool> strict{true};
  const bool evaluated = evaluate_on_entries(e, column, dictionary, parameters, threads, [&](size_t begin, const Vector& v) {
    Slice slice{begin, v, std::vector<int32_t>(v.count, -1), {}};
    std::unordered_map<std::string_view, int32_t> seen;
    for (size_t i = 0; i < v.count; ++i) {
      if (slice.values.null_at(i)) continue;
      if (begin + i == n) strict = false;
      const auto [at, fresh] = seen.emplace(slice.values.text_at(i), static_cast<int32_t>(slice.distinct.size()));
      if (fresh) slice.distinct.push_back(at->first);
      slice.local[i] = at->second;
    }
    const std::lock_guard lock(slices_mutex);
    slices.push_back(std::move(slice));
  });
  if (!evaluated || !strict) return std::nullopt;
  // Codes in the entries' order, whichever thread finished first.
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
  auto coded = std::make_shared<storage::StringDictionary>();
  auto codes = std::make_shared<std::vector<int32_t>>(n + 1, 0);
  auto validity = std::make_shared<std::vector<uint8_t>>(n + 1, 1);
  bool nulls = false;
  for (const Slice& slice : slices) {
    std::vector<int32_t> global(slice.distinct.size());
    for (size_t d = 0; d < global.size(); ++d) global[d] = coded->intern(slice.distinct[d]);
    for (size_t i = 0; i < slice.local.size(); ++i) {
      const size_t at = slice.begin + i;
      if (slice.local[i] >= 0) {
        (*codes)[at] = global[static_cast<size_t>(slice.local[i])];
      } else if (at < n) {
        (*validity)[at] = 0;
        nulls = true;
      }
    }
  }
  EntryLookup out = lookup_of(codes, ColumnWidth::int32, n, validity, nulls);
  out.codes = std::move(coded);
  return out;
}

}  // namespace

std::optional<EntryLookup> entry_verdicts(const Expr& e, const ColumnExpr& column,
                                          const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                          const std::vector<Value>* parameters, int threads) {
  const std::shared_ptr<const EntryResult> kept = entry_truths(e, column, dictionary, parameters, threads);
  if (!kept) return std::nullopt;
  const std::vector<uint8_t>& truths = kept->truths;
  const size_t n = truths.size() - 1;
  if (truths[n] != kNull) return std::nullopt;  // the lookup of a NULL code gives NULL
  auto verdicts = std::make_shared<std::vector<int32_t>>(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    if (truths[i] == kNull) return std::nullopt;  // an entry's NULL
    (*verdicts)[i] = truths[i];
  }
  return lookup_of(verdicts, ColumnWidth::int32, n, nullptr, false);
}

std::optional<std::vector<uint8_t>> entry_passes(const Expr& e, const ColumnExpr& column,
                                                 const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                                 const std::vector<Value>* parameters, int threads, size_t from) {
  // Entries a filter lacks (its column grew) are evaluated, not kept.
  std::optional<std::vector<uint8_t>> fresh;
  std::shared_ptr<const EntryResult> kept;
  if (from != 0) fresh = compute_entry_truths(e, column, dictionary, parameters, threads, from);
  else kept = entry_truths(e, column, dictionary, parameters, threads);
  const std::vector<uint8_t>* truths = kept ? &kept->truths : fresh ? &*fresh : nullptr;
  if (truths == nullptr) return std::nullopt;
  std::vector<uint8_t> passes(truths->size());
  for (size_t i = 0; i < passes.size(); ++i) passes[i] = (*truths)[i] == kTrue ? 1 : 0;
  return passes;
}

bool entry_conditions_kept(const Expr& e, const ColumnExpr& column, const storage::StringDictionary& dictionary) {
  return entry_result_kept(EntryResultKind::conditions, e, column, dictionary);
}

std::shared_ptr<const std::vector<uint8_t>> kept_entry_truths(const Expr& e, const ColumnExpr& column,
                                                              const storage::StringDictionary& dictionary) {
  const std::shared_ptr<const EntryResult> kept = kept_entry_result(EntryResultKind::conditions, e, column, dictionary);
  if (!kept) return nullptr;
  return std::shared_ptr<const std::vector<uint8_t>>(kept, &kept->truths);
}

bool entry_conditions_keepable(const Expr& e, const ColumnExpr& column) { return entry_result_keepable(e, column); }

std::optional<EntryLookup> entry_values(const Expr& e, const ColumnExpr& column,
                                        const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                        const std::vector<Value>* parameters, int threads) {
  return lookup_in(cached_entry_result(EntryResultKind::values, e, column, *dictionary, [&] {
    return result_of(compute_entry_values(e, column, dictionary, parameters, threads));
  }));
}

std::optional<EntryLookup> entry_text_codes(const Expr& e, const ColumnExpr& column,
                                            const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                            const std::vector<Value>* parameters, int threads) {
  return lookup_in(cached_entry_result(EntryResultKind::text_codes, e, column, *dictionary, [&] {
    return result_of(compute_entry_text_codes(e, column, dictionary, parameters, threads));
  }));
}

}  // namespace tally::executor
