#include "common/column_program_run.hpp"

#include "common/column_program_batch.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

namespace tally {

bool has_programs(const AggregationSpec& spec) {
  if (!spec.row_filter.empty()) return true;
  for (const ColumnProgram& p : spec.value_programs) {
    if (!p.empty()) return true;
  }
  return false;
}

AggregationSpec without_programs(const AggregationSpec& spec) {
  AggregationSpec inner = spec;
  inner.row_filter = ColumnProgram{};
  inner.value_programs.clear();
  return inner;
}

namespace {

std::vector<ProgramColumn> program_columns_of(const std::vector<ColumnView>& columns) {
  std::vector<ProgramColumn> cols;
  cols.reserve(columns.size());
  for (const ColumnView& c : columns) cols.push_back(program_column(c));
  return cols;
}

}  // namespace

uint32_t evaluate_program(const ColumnProgram& program, const std::vector<ColumnView>& columns, size_t rows,
                          uint8_t* mask, void* values, uint8_t* validity) {
  return evaluate_program_rows(program, program_columns_of(columns), 0, rows, mask, values, validity);
}

namespace {

template <class T>
void gather_rows(const T* src, const std::vector<uint32_t>& kept, T* out) {
  for (size_t k = 0; k < kept.size(); ++k) out[k] = src[kept[k]];
}

size_t width_bytes(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::float32 ? 4 : 8; }

// Rows below which one thread evaluates a chunk's programs: a thread's
// start costs tens of microseconds, a row tens of nanoseconds.
constexpr size_t kRowsPerThread = size_t{1} << 15;

class ProgramRun final : public AggregationRun {
 public:
  ProgramRun(const AggregationSpec& spec, std::unique_ptr<AggregationRun> inner) : spec_(spec), inner_(std::move(inner)) {}

  int passes() const override { return inner_->passes(); }
  void begin_pass(int pass) override { inner_->begin_pass(pass); }

  void sink(const ChunkInput& chunk) override {
    const size_t rows = chunk.rows;
    std::vector<uint8_t> mask(spec_.row_filter.empty() ? 0 : rows);
    ChunkInput in = chunk;
    in.program_columns.clear();
    // Evaluated inputs: 8 bytes per row, validity beside. Rows the filter
    // drops are not computed (PostgreSQL never computes them: no error).
    // Left uninitialized: evaluate_program_rows writes every row, the
    // dropped ones as NULL.
    std::vector<std::unique_ptr<int64_t[]>> computed(spec_.value_programs.size());
    std::vector<std::unique_ptr<uint8_t[]>> computed_valid(spec_.value_programs.size());
    for (size_t i = 0; i < spec_.value_programs.size() && i < in.values.size(); ++i) {
      const ColumnProgram& p = spec_.value_programs[i];
      if (p.empty()) continue;
      computed[i] = std::make_unique_for_overwrite<int64_t[]>(rows);
      computed_valid[i] = std::make_unique_for_overwrite<uint8_t[]>(rows);
      ColumnView& v = in.values[i];
      v.width = p.result == ProgramResult::float64 ? ColumnWidth::float64 : ColumnWidth::int64;
      v.data = computed[i].get();
      v.identity = ColumnIdentity{};
      v.validity = computed_valid[i].get();
    }
    // The filter, then the inputs, of each part of the rows on a thread of
    // its own: the host evaluates row by row, so a large chunk is split.
    const std::vector<ProgramColumn> cols = program_columns_of(chunk.program_columns);
    auto evaluate_part = [&](size_t begin, size_t end) {
      uint32_t error = 0;
      if (!mask.empty()) error |= evaluate_program_rows(spec_.row_filter, cols, begin, end, mask.data(), nullptr, nullptr);
      for (size_t i = 0; i < computed.size(); ++i) {
        if (!computed[i]) continue;
        error |= evaluate_program_rows(spec_.value_programs[i], cols, begin, end, mask.empty() ? nullptr : mask.data(),
                                       computed[i].get(), computed_valid[i].get());
      }
      return error;
    };
    const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    const size_t threads = std::min<size_t>(spec_.threads > 0 ? static_cast<size_t>(spec_.threads) : hardware,
                                            std::max<size_t>(1, rows / kRowsPerThread));
    uint32_t error = 0;
    if (threads <= 1) {
      error = evaluate_part(0, rows);
    } else {
      std::vector<std::future<uint32_t>> parts;
      const size_t per = (rows + threads - 1) / threads;
      for (size_t t = 1; t < threads; ++t) {
        parts.push_back(std::async(std::launch::async, evaluate_part, std::min(rows, t * per), std::min(rows, (t + 1) * per)));
      }
      error = evaluate_part(0, std::min(rows, per));
      for (auto& p : parts) error |= p.get();
    }
    if (error) throw ProgramOverflow{error};
    if (mask.empty()) {
      inner_->sink(in);
      return;
    }
    std::vector<uint32_t> kept;
    kept.reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      if (mask[r]) kept.push_back(static_cast<uint32_t>(r));
    }
    if (kept.empty()) return;
    in.rows = kept.size();
    std::vector<std::vector<uint8_t>> bytes;
    bytes.reserve(4 + 2 * (in.values.size() + in.key_columns.size() + in.filters.size()));
    auto gather = [&](ColumnView& v) {
      if (v.data == nullptr) return;
      const size_t w = width_bytes(v.width);
      bytes.emplace_back(kept.size() * w);
      uint8_t* out = bytes.back().data();
      if (w == 4) gather_rows(static_cast<const uint32_t*>(v.data), kept, reinterpret_cast<uint32_t*>(out));
      else gather_rows(static_cast<const uint64_t*>(v.data), kept, reinterpret_cast<uint64_t*>(out));
      v.data = out;
      v.identity = ColumnIdentity{};
      if (v.validity != nullptr) v.validity = gather_bytes(v.validity, kept, bytes);
    };
    gather(in.keys);
    for (ColumnView& k : in.key_columns) gather(k);
    for (ColumnView& v : in.values) gather(v);
    for (const uint8_t*& f : in.filters) {
      if (f != nullptr) f = gather_bytes(f, kept, bytes);
    }
    inner_->sink(in);
  }

  AggregationResult finalize() override { return inner_->finalize(); }
  AggregationReport report() const override {
    AggregationReport r = inner_->report();
    r.details.push_back("Programs: WHERE and inputs evaluated on the host");
    return r;
  }

 private:
  static const uint8_t* gather_bytes(const uint8_t* src, const std::vector<uint32_t>& kept,
                                     std::vector<std::vector<uint8_t>>& bytes) {
    bytes.emplace_back(kept.size());
    for (size_t k = 0; k < kept.size(); ++k) bytes.back()[k] = src[kept[k]];
    return bytes.back().data();
  }

  AggregationSpec spec_;
  std::unique_ptr<AggregationRun> inner_;
};

}  // namespace

std::unique_ptr<AggregationRun> make_program_run(
    const AggregationSpec& spec, const std::function<std::unique_ptr<AggregationRun>(const AggregationSpec&)>& start) {
  return std::make_unique<ProgramRun>(spec, start(without_programs(spec)));
}

}  // namespace tally
