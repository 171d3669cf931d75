// TableScan's row selection by an engine that keeps copies of the stored
// columns (the GPU): which of the scan's conjuncts and key tests it takes,
// and the program and bitmaps it takes them as (common/scan_selection.hpp).
#include <algorithm>
#include <cstdint>
#include <deque>

#include "executor/database.hpp"
#include "executor/operators/key_chains.hpp"
#include "executor/operators/stored_key_test.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/stored_width.hpp"
#include "executor/subquery_expr.hpp"

namespace tally::executor {

std::unique_ptr<ScanSelectionRun> TableScan::start_selection(const ExecContext& context, const PartStates& states,
                                                            const KeyTestRuns& tests, std::vector<uint8_t>& on_device,
                                                            std::vector<size_t>& program_reads,
                                                            std::vector<uint8_t>& filters_on_device,
                                                            std::string& why_not) const {
  // Below a million rows the host's loops take less than the device's round
  // trips per piece.
  constexpr uint64_t kMinSelectionRows = uint64_t{1} << 20;
  // The widest exact key bitmap made for the device: 128 MiB.
  constexpr uint64_t kMaxDeviceBitmapBits = uint64_t{1} << 30;
  // Exact bitmaps made here, copied by the engine before this returns.
  struct ExactBits {
    int64_t min = 0;
    uint64_t span = 0;
    std::vector<uint64_t> words;
  };
  std::deque<ExactBits> exact_bitmaps;
  on_device.assign(tests.size(), 0);
  const auto* engine_table = dynamic_cast<const EngineTableSnapshot*>(table_.get());
  AggregateEngine* engine = context.gpu_engine;
  if (engine == nullptr && engine_table != nullptr) engine = engine_table->gpu_engine();
  if (engine == nullptr || context.engine == "cpu" || engine_table == nullptr || table_->oid() == 0 ||
      table_->row_count() < kMinSelectionRows) {
    return nullptr;
  }
  // A conjunct compiled as a program runs on the device too: where it
  // raises an error flag there, its piece is filtered on the host, which
  // raises the error where PostgreSQL would. Others may raise one the
  // device would skip (their rows dropped by a key test first).
  for (size_t p = 0; p < filter_parts_.size(); ++p) {
    const FilterPart& part = filter_parts_[p];
    if (!part.subquery && !part.dictionary && !part.compared && !states[p].program) {
      why_not = "a filter may raise an error, which the device cannot";
      return nullptr;
    }
  }
  ScanSelectionSpec spec;
  spec.table = table_->oid();
  spec.compile_programs = context.jit;
  program_reads = compared_columns_;
  auto add_column = [&](size_t read) {
    const auto at = std::find(program_reads.begin(), program_reads.end(), read);
    if (at != program_reads.end()) return static_cast<uint32_t>(at - program_reads.begin());
    program_reads.push_back(read);
    return static_cast<uint32_t>(program_reads.size() - 1);
  };
  filters_on_device.assign(filter_parts_.size(), 0);
  // The programs' columns, numbered before the key tests add theirs; their
  // steps are written once every column is known (lookups follow them).
  std::vector<std::vector<uint32_t>> program_columns(filter_parts_.size());
  for (size_t p = 0; p < filter_parts_.size(); ++p) {
    if (!states[p].program) continue;
    for (const size_t read : states[p].program->reads()) program_columns[p].push_back(add_column(read));
    filters_on_device[p] = 1;
  }
  // The key tests' bitmaps, on keys stored as the device reads them (int2
  // is narrower). A single key's exact bitmap is the whole test; a bucketed
  // one (bits_shift) or a composite key's column bitmaps only rule rows out,
  // and the scan still tests the rows they keep.
  for (size_t t = 0; t < tests.size(); ++t) {
    const KeyChains* chains = tests[t]->test->chains;
    const std::vector<size_t>& stored = tests[t]->stored;
    if (chains == nullptr || stored.empty()) continue;
    auto device_readable = [&](size_t read) { return read_columns_[read].type.id != TypeId::int2; };
    if ((chains->bits_shift > 0 || chains->bits.empty()) && stored.size() == 1 && device_readable(stored[0]) &&
        tests[t]->test->exact_bits) {
      // The device holds the exact bitmap the host buckets or leaves out
      // (60M order keys are 7.5 MB): the whole key test moves there.
      ExactBits& exact = exact_bitmaps.emplace_back();
      if (tests[t]->test->exact_bits(kMaxDeviceBitmapBits, exact.min, exact.span, exact.words)) {
        on_device[t] = 1;
        spec.key_tests.push_back(SelectionKeyTest{add_column(stored[0]), exact.words.data(), exact.min, exact.span, 0});
        continue;
      }
    }
    if (!chains->bits.empty() && stored.size() == 1 && device_readable(stored[0])) {
      on_device[t] = chains->bits_shift == 0 ? 1 : 0;
      spec.key_tests.push_back(SelectionKeyTest{add_column(stored[0]), chains->bits.data(), chains->bits_min,
                                                chains->bits_span, chains->bits_shift});
      continue;
    }
    for (const KeyChains::ColumnBits& column : chains->column_bits) {
      if (column.column >= stored.size() || !device_readable(stored[column.column])) continue;
      spec.key_tests.push_back(
          SelectionKeyTest{add_column(stored[column.column]), column.words.data(), column.min, column.span, 0});
    }
  }
  // `column IN (uncorrelated subquery)` over a stored integer column: the
  // subquery's values (run ahead of the scan) as an exact bitmap, the whole
  // conjunct moved to the device (TPC-H Q18's 632 order keys over 15M
  // orders). A NULL among the values matches no row, as on the host.
  for (size_t p = 0; p < filter_parts_.size(); ++p) {
    const auto* in = dynamic_cast<const SubqueryExpr*>(filter_parts_[p].condition);
    if (in == nullptr || in->kind != SubqueryKind::any || !in->hashable || !in->correlated.empty() || !in->left) continue;
    const ColumnExpr* column = stored_integer_key(*in->left);
    const auto at = column ? std::find(read_layout_.begin(), read_layout_.end(), column->index) : read_layout_.end();
    if (at == read_layout_.end()) continue;
    const auto read = static_cast<size_t>(at - read_layout_.begin());
    if (read_columns_[read].type.id == TypeId::int2) continue;
    std::shared_ptr<const Vector> values;
    try {
      const std::vector<Value> none;
      values = in->values_once(context.parameters ? *context.parameters : none);
    } catch (const Error&) {
      continue;  // raised where a row evaluates it, as PostgreSQL does
    }
    if (values->type.id != read_columns_[read].type.id) continue;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < values->size(); ++i) {
      if (values->null_at(i)) continue;
      lo = std::min(lo, values->int_data()[i]);
      hi = std::max(hi, values->int_data()[i]);
    }
    ExactBits& bits = exact_bitmaps.emplace_back();
    if (hi >= lo) {
      const uint64_t last = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
      if (last >= kMaxDeviceBitmapBits) continue;
      bits.min = lo;
      bits.span = last + 1;
    }
    bits.words.assign(bits.span / 64 + 2, 0);
    for (size_t i = 0; i < values->size(); ++i) {
      if (values->null_at(i)) continue;
      const uint64_t k = static_cast<uint64_t>(values->int_data()[i]) - static_cast<uint64_t>(bits.min);
      bits.words[k >> 6] |= uint64_t{1} << (k & 63);
    }
    filters_on_device[p] = 1;
    spec.key_tests.push_back(SelectionKeyTest{add_column(read), bits.words.data(), bits.min, bits.span, 0});
  }
  spec.filter = compared_program_;
  for (size_t p = 0; p < filter_parts_.size(); ++p) {
    if (!states[p].program) continue;
    const ProgramFilter& program = *states[p].program;
    const auto reads = static_cast<int32_t>(program.reads().size());
    const auto first_lookup = static_cast<int32_t>(program_reads.size() + spec.lookups.size());
    const bool first = spec.filter.empty();
    for (ProgramStep step : program.program().steps) {
      if (step.op == ProgramOp::load) step.arg = static_cast<int32_t>(program_columns[p][static_cast<size_t>(step.arg)]);
      if (step.op == ProgramOp::lookup) step.arg = first_lookup + (step.arg - reads);
      spec.filter.steps.push_back(step);
    }
    if (!first) spec.filter.steps.push_back(ProgramStep{ProgramOp::and_});
    spec.lookups.insert(spec.lookups.end(), program.lookups().begin(), program.lookups().end());
  }
  if (spec.filter.empty() && spec.key_tests.empty()) {
    // Only where there was something to select by.
    if (!tests.empty() || !filters_.empty()) {
      why_not = filters_.empty() ? "" : "no conjunct compares a stored column with a constant";
      for (const auto& test : tests) {
        const KeyChains* chains = test->test->chains;
        why_not += why_not.empty() ? "" : "; ";
        if (chains == nullptr || test->stored.empty()) why_not += "a key test whose keys are not stored integer columns";
        else if (test->stored.size() > 1) why_not += "a key test of " + std::to_string(test->stored.size()) + " columns with no column bitmap";
        else why_not += "a key test with no bitmap";
      }
    }
    return nullptr;
  }
  for (const size_t read : program_reads) {
    spec.columns.push_back(static_cast<uint32_t>(table_columns_[read]));
    spec.widths.push_back(stored_width(read_columns_[read].type.id));
  }
  auto run = engine->start_selection(spec);
  if (!run) {
    on_device.assign(tests.size(), 0);
    filters_on_device.assign(filter_parts_.size(), 0);
    why_not = "the engine declined (its columns could not be held)";
  }
  return run;
}

}  // namespace tally::executor
