#include "common/column_program_run.hpp"

#include "common/column_program_batch.hpp"
#include "common/column_program_comparisons.hpp"
#include "common/for_parts.hpp"

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
  return !spec.key_programs.empty();
}

AggregationSpec without_programs(const AggregationSpec& spec) {
  AggregationSpec inner = spec;
  inner.row_filter = ColumnProgram{};
  inner.value_programs.clear();
  inner.key_programs.clear();
  inner.lookup_columns.clear();
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

namespace {

// The lookup columns as the host evaluates them: those made from keys
// scattered into arrays, and text verdicts matched, held here.
struct HostLookups {
  std::vector<ProgramColumn> columns;
  std::vector<std::vector<int32_t>> rows;
  std::vector<std::vector<uint8_t>> present;
  explicit HostLookups(const std::vector<LookupColumn>& lookups) {
    for (const LookupColumn& l : lookups) {
      ProgramColumn c = l.column;
      if (l.from_text()) {
        rows.emplace_back(c.size);
        const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        match_text_entries(*l.text, rows.back().data(), threads);
        c.data = rows.back().data();
      } else if (l.from_keys()) {
        rows.emplace_back(c.size);
        present.emplace_back(c.size);
        scatter_lookup_keys(l, rows.back().data(), present.back().data());
        c.data = rows.back().data();
        c.validity = present.back().data();
      }
      columns.push_back(c);
    }
  }
};

}  // namespace

uint32_t evaluate_program(const ColumnProgram& program, const std::vector<ColumnView>& columns, size_t rows,
                          uint8_t* mask, void* values, uint8_t* validity, const std::vector<LookupColumn>& lookups) {
  std::vector<ProgramColumn> cols = program_columns_of(columns);
  const HostLookups host(lookups);
  cols.insert(cols.end(), host.columns.begin(), host.columns.end());
  return evaluate_program_rows(program, cols, 0, rows, mask, values, validity);
}

namespace {

size_t width_bytes(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::float32 ? 4 : 8; }

template <class T>
void gather_rows(const T* src, const uint32_t* kept, size_t n, T* out) {
  for (size_t k = 0; k < n; ++k) out[k] = src[kept[k]];
}

// An array gathered at the kept rows: (source, width in bytes, destination).
struct Gather {
  const void* src;
  size_t width;
  uint8_t* out;
};

// The `n` kept rows `kept` of every array, written from row `at` of each destination.
void gather_part(const std::vector<Gather>& gathers, const uint32_t* kept, size_t n, size_t at) {
  for (const Gather& g : gathers) {
    uint8_t* out = g.out + at * g.width;
    if (g.width == 8) gather_rows(static_cast<const uint64_t*>(g.src), kept, n, reinterpret_cast<uint64_t*>(out));
    else if (g.width == 4) gather_rows(static_cast<const uint32_t*>(g.src), kept, n, reinterpret_cast<uint32_t*>(out));
    else gather_rows(static_cast<const uint8_t*>(g.src), kept, n, out);
  }
}

// Points columns[0, count) at fresh arrays of n rows (held in `bytes`) and
// returns the gathers that fill them from the columns' arrays.
std::vector<Gather> program_column_gathers(std::vector<ProgramColumn>& columns, size_t count, size_t n,
                                           std::vector<std::unique_ptr<uint8_t[]>>& bytes) {
  std::vector<Gather> gathers;
  auto add = [&](const void* src, size_t width) {
    bytes.push_back(std::make_unique_for_overwrite<uint8_t[]>(n * width));
    gathers.push_back({src, width, bytes.back().get()});
    return bytes.back().get();
  };
  for (size_t c = 0; c < count; ++c) {
    ProgramColumn& g = columns[c];
    if (g.data != nullptr) g.data = add(g.data, width_bytes(static_cast<ColumnWidth>(g.width)));
    if (g.validity != nullptr) g.validity = add(g.validity, 1);
  }
  return gathers;
}

}  // namespace

void gather_program_columns(std::vector<ProgramColumn>& columns, size_t count, const uint32_t* kept, size_t n,
                            std::vector<std::unique_ptr<uint8_t[]>>& bytes) {
  gather_part(program_column_gathers(columns, count, n, bytes), kept, n, 0);
}

void match_text_entries(const TextVerdicts& text, int32_t* verdicts, int threads) {
  // Parts of a million entries at least: a thread costs tens of
  // microseconds, an entry tens of nanoseconds.
  const auto n = static_cast<size_t>(text.count);
  const size_t parts = std::clamp<size_t>(n >> 20, 1, static_cast<size_t>(std::max(threads, 1)));
  for_parts(parts, n, [&](size_t, size_t begin, size_t end) {
    for (size_t code = begin; code < end; ++code) {
      const std::string_view t = text.entries->at(static_cast<int32_t>(code));
      verdicts[code] = runs_match(t.data(), t.size(), text.pattern) ? 1 : 0;
    }
  });
}

namespace {

// Rows below which one thread evaluates a chunk's programs: a thread's
// start costs tens of microseconds, a row tens of nanoseconds.
constexpr size_t kRowsPerThread = size_t{1} << 15;

class ProgramRun final : public AggregationRun {
 public:
  ProgramRun(const AggregationSpec& spec, std::unique_ptr<AggregationRun> inner)
      : spec_(spec), inner_(std::move(inner)), lookups_(spec.lookup_columns) {}

  int passes() const override { return inner_->passes(); }
  void begin_pass(int pass) override { inner_->begin_pass(pass); }

  std::shared_ptr<void> prepare(ChunkInput& chunk) const override {
    // One thread per chunk: the reader's threads evaluate several at once.
    auto held = std::make_shared<Evaluated>();
    evaluate(chunk, 1, *held);
    return held;
  }

  void sink(const ChunkInput& chunk) override {
    if (chunk.programs_evaluated) {
      if (chunk.rows > 0) inner_->sink(chunk);
      return;
    }
    // The host evaluates row by row: a large chunk is split over threads.
    const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    const size_t threads = std::min<size_t>(spec_.threads > 0 ? static_cast<size_t>(spec_.threads) : hardware,
                                            std::max<size_t>(1, chunk.rows / kRowsPerThread));
    ChunkInput in = chunk;
    Evaluated held;
    evaluate(in, threads, held);
    if (in.rows > 0) inner_->sink(in);
  }

  AggregationResult finalize() override { return inner_->finalize(); }
  AggregationReport report() const override {
    AggregationReport r = inner_->report();
    r.details.push_back("Programs: WHERE and inputs evaluated on the host");
    return r;
  }

 private:
  // The arrays an evaluated chunk's views point into.
  struct Evaluated {
    std::vector<std::unique_ptr<int64_t[]>> computed;
    std::vector<std::unique_ptr<uint8_t[]>> computed_valid;
    std::vector<std::unique_ptr<int64_t[]>> keys;
    std::vector<std::unique_ptr<uint8_t[]>> keys_valid;
    std::vector<std::unique_ptr<uint8_t[]>> bytes;  // gathered arrays: every byte written by gather_part
  };

  // Evaluates the WHERE and the input programs of `in`'s rows on `threads`
  // threads, then rewrites `in` to the rows the WHERE keeps (rows 0: none),
  // its views into `held`.
  void evaluate(ChunkInput& in, size_t threads, Evaluated& held) const {
    const size_t rows = in.rows;
    std::vector<uint8_t> mask(spec_.row_filter.empty() ? 0 : rows);
    std::vector<ProgramColumn> cols = program_columns_of(in.program_columns);
    cols.insert(cols.end(), lookups_.columns.begin(), lookups_.columns.end());
    in.program_columns.clear();
    in.programs_evaluated = true;
    // Evaluated inputs: 8 bytes per row, validity beside. Rows the filter
    // drops are not computed (PostgreSQL never computes them: no error).
    // Left uninitialized: evaluate_program_rows writes every row, the
    // dropped ones as NULL.
    std::vector<std::unique_ptr<int64_t[]>>& computed = held.computed;
    std::vector<std::unique_ptr<uint8_t[]>>& computed_valid = held.computed_valid;
    computed.resize(spec_.value_programs.size());
    computed_valid.resize(spec_.value_programs.size());
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
    // Key programs: their parts' columns, as the inputs'.
    std::vector<std::unique_ptr<int64_t[]>>& keys = held.keys;
    std::vector<std::unique_ptr<uint8_t[]>>& keys_valid = held.keys_valid;
    keys.resize(spec_.key_programs.size());
    keys_valid.resize(spec_.key_programs.size());
    for (size_t k = 0; k < spec_.key_programs.size() && k < in.key_columns.size(); ++k) {
      keys[k] = std::make_unique_for_overwrite<int64_t[]>(rows);
      keys_valid[k] = std::make_unique_for_overwrite<uint8_t[]>(rows);
      in.key_columns[k] = ColumnView{ColumnWidth::int64, keys[k].get(), keys_valid[k].get(), {}};
    }
    // The filter of each part of the rows, then the inputs and keys: over
    // every row where the filter keeps most (each dropped row skipped, its
    // value left NULL), else over the kept rows alone, their columns
    // gathered first (TPC-H Q6 keeps 2% of lineitem: its input is computed
    // and written for 2% of the rows, not 100%).
    const size_t row_columns = cols.size() - lookups_.columns.size();
    auto evaluate_inputs = [&](const std::vector<ProgramColumn>& over, size_t begin, size_t end, uint8_t* kept) {
      uint32_t error = 0;
      for (size_t i = 0; i < computed.size(); ++i) {
        if (!computed[i]) continue;
        error |= evaluate_program_rows(spec_.value_programs[i], over, begin, end, kept, computed[i].get(),
                                       computed_valid[i].get());
      }
      for (size_t k = 0; k < keys.size(); ++k) {
        if (!keys[k]) continue;
        error |= evaluate_program_rows(spec_.key_programs[k], over, begin, end, kept, keys[k].get(), keys_valid[k].get());
      }
      return error;
    };
    const bool any_inputs = std::any_of(computed.begin(), computed.end(), [](const auto& c) { return c != nullptr; }) ||
                            std::any_of(keys.begin(), keys.end(), [](const auto& k) { return k != nullptr; });
    std::vector<uint32_t> errors(threads, 0);
    for_parts(threads, rows, [&](size_t part, size_t begin, size_t end) {
      if (!mask.empty()) errors[part] |= evaluate_program_rows(spec_.row_filter, cols, begin, end, mask.data(), nullptr, nullptr);
    });
    // The kept rows, each part's at its offset.
    std::vector<size_t> offsets(threads + 1, 0);
    std::vector<uint32_t> kept;
    if (!mask.empty()) {
      std::vector<std::vector<uint32_t>> part_rows(threads);
      for_parts(threads, rows, [&](size_t part, size_t begin, size_t end) {
        rows_of_mask(mask.data(), begin, end, part_rows[part]);
        offsets[part + 1] = part_rows[part].size();
      });
      for (size_t t = 0; t < threads; ++t) offsets[t + 1] += offsets[t];
      kept.resize(offsets[threads]);
      for_parts(threads, rows, [&](size_t part, size_t begin, size_t) {
        uint32_t* out = kept.data() + offsets[part];
        for (const uint32_t r : part_rows[part]) *out++ = static_cast<uint32_t>(begin) + r;
      });
    }
    const size_t kept_rows = mask.empty() ? rows : offsets[threads];
    const bool on_kept_rows = !mask.empty() && any_inputs && kept_rows * 2 < rows;
    if (on_kept_rows) {
      // The row columns' kept rows (the lookups' columns are by key: as they are).
      std::vector<ProgramColumn> gathered = cols;
      std::vector<std::unique_ptr<uint8_t[]>> gathered_bytes;
      const std::vector<Gather> column_gathers = program_column_gathers(gathered, row_columns, kept_rows, gathered_bytes);
      for_parts(threads, rows, [&](size_t part, size_t, size_t) {
        gather_part(column_gathers, kept.data() + offsets[part], offsets[part + 1] - offsets[part], offsets[part]);
        errors[part] |= evaluate_inputs(gathered, offsets[part], offsets[part + 1], nullptr);
      });
    } else {
      uint8_t* filter = mask.empty() ? nullptr : mask.data();
      for_parts(threads, rows, [&](size_t part, size_t begin, size_t end) {
        errors[part] |= evaluate_inputs(cols, begin, end, filter);
      });
    }
    uint32_t error = 0;
    for (uint32_t e : errors) error |= e;
    if (error) throw ProgramOverflow{error};
    if (mask.empty()) return;
    // The rows the filter keeps, and their values, gathered by the same
    // parts (each writes its rows at its offset): the inputs and keys
    // computed on the kept rows alone are gathered already.
    in.rows = kept_rows;
    if (kept_rows == 0) return;
    std::vector<std::unique_ptr<uint8_t[]>>& bytes = held.bytes;
    bytes.reserve(4 + 2 * (in.values.size() + in.key_columns.size() + in.filters.size()));
    // Each gathered array, filled by every part below (not cleared first:
    // the gathers write every byte, and a filter that keeps most rows
    // gathers megabytes).
    std::vector<Gather> gathers;
    auto add = [&](const void* src, size_t width) {
      bytes.push_back(std::make_unique_for_overwrite<uint8_t[]>(kept_rows * width));
      gathers.push_back({src, width, bytes.back().get()});
      return bytes.back().get();
    };
    auto plan = [&](ColumnView& v) {
      if (v.data == nullptr) return;
      const void* data = v.data;
      v.data = add(data, width_bytes(v.width));
      v.identity = ColumnIdentity{};
      if (v.validity != nullptr) v.validity = add(v.validity, 1);
    };
    plan(in.keys);
    for (size_t k = 0; k < in.key_columns.size(); ++k) {
      if (!on_kept_rows || k >= keys.size() || !keys[k]) plan(in.key_columns[k]);
    }
    for (size_t i = 0; i < in.values.size(); ++i) {
      if (!on_kept_rows || i >= computed.size() || !computed[i]) plan(in.values[i]);
    }
    for (const uint8_t*& f : in.filters) {
      if (f != nullptr) f = add(f, 1);
    }
    for_parts(threads, rows, [&](size_t part, size_t, size_t) {
      gather_part(gathers, kept.data() + offsets[part], offsets[part + 1] - offsets[part], offsets[part]);
    });
  }

  AggregationSpec spec_;
  std::unique_ptr<AggregationRun> inner_;
  HostLookups lookups_;  // made once, read by every chunk's evaluation
};

}  // namespace

std::unique_ptr<AggregationRun> make_program_run(
    const AggregationSpec& spec, const std::function<std::unique_ptr<AggregationRun>(const AggregationSpec&)>& start) {
  return std::make_unique<ProgramRun>(spec, start(without_programs(spec)));
}

}  // namespace tally
