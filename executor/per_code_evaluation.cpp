#include "executor/per_code_evaluation.hpp"

#include <memory>
#include <string>
#include <vector>

#include "executor/plan_expressions.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {
namespace {

// Below this many rows the row-wise call is as cheap as finding codes.
constexpr size_t kMinRows = 64;
// More distinct codes than rows / kMinRepeat and the saving no longer pays
// for the pass that finds them.
constexpr size_t kMinRepeat = 4;

// Each row's slot among the distinct codes (-1 for NULL), in order of first
// appearance; false as soon as there are more than `most` distinct codes,
// or at a code its dictionary lacks (a row grown but never set: the
// row-wise path reads it as materialize() does).
template <typename SlotOf>
bool slot_rows(const Vector& in, size_t rows, size_t most, SlotOf&& slot_of, std::vector<int32_t>& row_slots,
               std::vector<int32_t>& distinct) {
  row_slots.resize(rows);
  const int32_t entries = in.dictionary->size();
  for (size_t i = 0; i < rows; ++i) {
    if (in.null_at(i)) {
      row_slots[i] = -1;
      continue;
    }
    const int32_t code = in.codes[i];
    if (code < 0 || code >= entries) return false;
    int32_t& slot = slot_of(code);
    if (slot < 0) {
      if (distinct.size() == most) return false;
      slot = static_cast<int32_t>(distinct.size());
      distinct.push_back(code);
    }
    row_slots[i] = slot;
  }
  return true;
}

}  // namespace

std::optional<Vector> evaluate_per_code(const FunctionExpr& call, std::span<const Vector* const> values,
                                        std::span<const bool> one_row, size_t rows) {
  if (!call.strict || rows < kMinRows || volatile_function(call.name)) return std::nullopt;
  size_t coded = values.size();
  for (size_t a = 0; a < values.size(); ++a) {
    if (one_row[a]) continue;
    if (!values[a]->coded() || coded != values.size()) return std::nullopt;
    coded = a;
  }
  if (coded == values.size()) return std::nullopt;
  const Vector& in = *values[coded];

  std::vector<int32_t> row_slots, distinct;
  const size_t most = rows / kMinRepeat;
  const auto entries = static_cast<size_t>(in.dictionary->size());
  bool few;
  if (entries <= rows * kMinRepeat) {
    std::vector<int32_t> slots(entries, -1);
    few = slot_rows(in, rows, most, [&](int32_t code) -> int32_t& { return slots[static_cast<size_t>(code)]; },
                    row_slots, distinct);
  } else {
    // Open addressing over the codes met (at most `most` before it gives
    // up): no allocation per code, which a column of more distinct values
    // than the chunk's quarter pays for every row it looks at.
    size_t capacity = 16;
    while (capacity < most * 2 + 2) capacity <<= 1;
    const size_t mask = capacity - 1;
    std::vector<int32_t> keys(capacity, -1), slots(capacity, -1);
    few = slot_rows(in, rows, most, [&](int32_t code) -> int32_t& {
      size_t at = (static_cast<uint64_t>(static_cast<uint32_t>(code)) * 0x9E3779B97F4A7C15ull >> 20) & mask;
      while (keys[at] != code && keys[at] != -1) at = (at + 1) & mask;
      keys[at] = code;
      return slots[at];
    }, row_slots, distinct);
  }
  if (!few) return std::nullopt;

  std::vector<Value> row(values.size());
  for (size_t a = 0; a < values.size(); ++a) {
    if (!one_row[a]) continue;
    row[a] = values[a]->get(0);
    if (is_null(row[a])) return broadcast(call.type, Null{}, rows);
  }
  Vector results(call.type);
  results.resize(distinct.size());
  for (size_t d = 0; d < distinct.size(); ++d) {
    row[coded] = std::string(in.dictionary->at(distinct[d]));
    results.set(d, call.fn(row));
  }
  Vector out(call.type);
  if (physical_of(call.type.id) == Physical::text) {
    // Text results stay coded, in a dictionary of their own distinct values:
    // a GROUP BY over them codes each once, not every row's string.
    auto dictionary = std::make_shared<storage::StringDictionary>();
    std::vector<int32_t> slot_codes(distinct.size(), -1);
    for (size_t d = 0; d < distinct.size(); ++d) {
      if (!results.null_at(d)) slot_codes[d] = dictionary->intern(results.text_at(d));
    }
    out.dictionary = std::move(dictionary);
    out.resize(rows);
    for (size_t i = 0; i < rows; ++i) {
      const int32_t code = row_slots[i] < 0 ? -1 : slot_codes[static_cast<size_t>(row_slots[i])];
      if (code < 0) {
        out.set_null(i);
        out.codes[i] = 0;
      } else {
        out.codes[i] = code;
      }
    }
    return out;
  }
  out.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    if (row_slots[i] < 0) out.set_null(i);
    else out.set_from(i, results, static_cast<size_t>(row_slots[i]));
  }
  return out;
}

}  // namespace tally::executor
