#include "executor/operators/program_filter.hpp"

#include <algorithm>
#include <memory>

#include "common/column_program_batch.hpp"
#include "common/column_program_run.hpp"
#include "executor/column_program_compiler.hpp"
#include "executor/stored_width.hpp"

namespace tally::executor {

std::unique_ptr<const ProgramFilter> ProgramFilter::compile(
    const Expr& conjunct, const std::vector<Read>& reads,
    const std::function<std::shared_ptr<const storage::StringDictionary>(size_t read)>& dictionary,
    const std::vector<Value>* parameters, int threads) {
  auto read_of = [&reads](int space_index) -> const Read* {
    for (const Read& r : reads) {
      if (r.space_index == space_index) return &r;
    }
    return nullptr;
  };
  ProgramColumnMap map;
  map.threads = threads;
  map.dictionary = [&](int space_index) -> std::shared_ptr<const storage::StringDictionary> {
    const Read* r = read_of(space_index);
    return r ? dictionary(r->read) : nullptr;
  };
  std::optional<ColumnProgram> program = compile_filter(conjunct, map, parameters);
  if (!program) return nullptr;
  auto filter = std::unique_ptr<ProgramFilter>(new ProgramFilter);
  for (const int space_index : map.table_columns) {
    const Read* r = read_of(space_index);
    if (r == nullptr || r->type.id == TypeId::int2 || r->type.id == TypeId::boolean) return nullptr;
    filter->reads_.push_back(r->read);
  }
  // Only lookups whose arrays the compiler made (a text condition's verdict
  // per code): no joined relation is looked up by a scan's own filter.
  for (const LookupColumn& l : map.lookups) {
    if (l.column.data == nullptr) return nullptr;
    filter->lookups_.push_back(l.column);
  }
  place_lookups(*program, map);
  filter->program_ = std::move(*program);
  filter->arrays_ = std::move(map.arrays);
  return filter;
}

bool ProgramFilter::select(const storage::ChunkBatch& batch, size_t begin, size_t end,
                           const std::vector<uint32_t>* kept, size_t rows, std::vector<uint32_t>& passing) const {
  passing.clear();
  if (rows == 0) return true;
  std::vector<ProgramColumn> columns;
  for (const size_t read : reads_) {
    const storage::ColumnVector& c = batch.columns[read];
    columns.push_back({c.data.data(), c.has_nulls() ? c.validity.data() : nullptr,
                       static_cast<uint8_t>(stored_width(c.type.id))});
  }
  columns.insert(columns.end(), lookups_.begin(), lookups_.end());
  // The candidates' span of the chunk, evaluated whole: where earlier
  // conjuncts kept few of its rows, those rows' values are gathered first.
  size_t first = begin, last = end;
  if (kept != nullptr) {
    first = kept->front();
    last = static_cast<size_t>(kept->back()) + 1;
  }
  if (kept != nullptr && 4 * rows < last - first) {
    std::vector<std::unique_ptr<uint8_t[]>> gathered;
    gather_program_columns(columns, reads_.size(), kept->data(), rows, gathered);
    const std::unique_ptr<uint8_t[]> mask(new uint8_t[rows]);
    if (evaluate_program_rows(program_, columns, 0, rows, mask.get(), nullptr, nullptr) != 0) return false;
    for (size_t j = 0; j < rows; ++j) {
      if (mask[j] != 0) passing.push_back(static_cast<uint32_t>(j));
    }
    return true;
  }
  // (evaluate_program_rows writes every byte of [first, last).)
  const std::unique_ptr<uint8_t[]> mask(new uint8_t[last]);
  if (evaluate_program_rows(program_, columns, first, last, mask.get(), nullptr, nullptr) != 0) return false;
  if (kept == nullptr) {
    for (size_t r = begin; r < end; ++r) {
      if (mask[r] != 0) passing.push_back(static_cast<uint32_t>(r - begin));
    }
  } else {
    for (size_t j = 0; j < rows; ++j) {
      if (mask[(*kept)[j]] != 0) passing.push_back(static_cast<uint32_t>(j));
    }
  }
  return true;
}

}  // namespace tally::executor
