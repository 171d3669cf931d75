#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/device_texts.cuh"
#include "gpu/pipeline/program_compiler.hpp"
#include "gpu/pipeline/program_rows.cuh"
#include "gpu/pipeline/program_source.hpp"

#include <cstdio>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/pageable_copy.cuh"

namespace tally::gpu {
namespace {

__global__ void programs_kernel(const tally::ProgramStep* steps, const __grid_constant__ ProgramArgs args, int64_t rows) {
  program_rows<InterpretedPrograms>(steps, args, rows);
}

// A lookup's build rows by key from the rows' keys (ascending, so each
// entry is written by one row).
__global__ void scatter_keys_kernel(const int64_t* keys, const uint8_t* nulls, size_t count, int64_t base, uint64_t span,
                                    int32_t* rows, uint8_t* present) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t r = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += stride) {
    if (nulls != nullptr && nulls[r] != 0) continue;
    const uint64_t at = static_cast<uint64_t>(keys[r]) - static_cast<uint64_t>(base);
    if (at >= span) continue;
    rows[at] = static_cast<int32_t>(r);
    present[at] = 1;
  }
}

}  // namespace

struct DeviceProgramEvaluator::Impl {
  DeviceBuffer steps, mask, error;
  // The compiled kernel of the programs last launched (null: interpreted),
  // what it was made for, and the launches so far.
  std::shared_ptr<const CompiledPrograms> compiled;
  std::vector<tally::ProgramStep> compiled_steps;
  std::vector<int> compiled_counts, compiled_shapes;
  std::string not_compiled;  // why, where no compiled kernel was asked for
  int arch = 0;
  uint64_t launches = 0, compiled_launches = 0;
  bool last_compiled = false;
  std::vector<DeviceBuffer> lookup_copies;
  std::vector<std::shared_ptr<const DeviceTexts>> texts;  // the dictionaries text verdicts were matched in
  std::vector<tally::ProgramColumn> lookups;  // device pointers
  bool error_cleared = false;
  std::vector<DeviceBuffer> values, validity;
  std::vector<tally::ProgramStep> host_steps;
};

DeviceProgramEvaluator::DeviceProgramEvaluator() : impl_(std::make_unique<Impl>()) {}
DeviceProgramEvaluator::~DeviceProgramEvaluator() = default;

void DeviceProgramEvaluator::evaluate(const tally::ColumnProgram& filter, const std::vector<tally::ColumnProgram>& inputs,
                                      const std::vector<ColumnPointer>& columns,
                                      const std::vector<tally::ColumnWidth>& widths, int64_t rows, StreamHandle stream,
                                      ProgramKernel kernel) {
  Impl& m = *impl_;
  if (columns.size() + m.lookups.size() > static_cast<size_t>(kMaxDeviceProgramColumns) ||
      inputs.size() > static_cast<size_t>(kMaxDevicePrograms))
    throw Error(SqlState::feature_not_supported, "GPU: more program columns or inputs than one launch takes");
  ProgramArgs args;
  m.host_steps.clear();
  auto append = [&](const tally::ColumnProgram& p, int& begin, int& count) {
    begin = static_cast<int>(m.host_steps.size());
    count = static_cast<int>(p.steps.size());
    m.host_steps.insert(m.host_steps.end(), p.steps.begin(), p.steps.end());
  };
  append(filter, args.filter_begin, args.filter_count);
  for (size_t i = 0; i < inputs.size(); ++i) {
    append(inputs[i], args.input_begin[i], args.input_count[i]);
    args.input_float[i] = inputs[i].result == tally::ProgramResult::float64;
  }
  if (m.host_steps.size() > static_cast<size_t>(kMaxDeviceSteps))
    throw Error(SqlState::feature_not_supported, "GPU: programs longer than one launch takes");
  args.inputs = static_cast<int>(inputs.size());
  args.column_count = static_cast<int>(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    args.columns[c] = tally::ProgramColumn{columns[c].data, columns[c].validity, static_cast<uint8_t>(widths[c])};
  }
  for (const tally::ProgramColumn& l : m.lookups) args.columns[args.column_count++] = l;
  const size_t n = static_cast<size_t>(rows > 0 ? rows : 1);
  m.steps.ensure(std::max<size_t>(1, m.host_steps.size()) * sizeof(tally::ProgramStep), stream);
  m.mask.ensure(n, stream);
  m.error.ensure(sizeof(uint32_t), stream);
  m.values.resize(inputs.size());
  m.validity.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;
    m.values[i].ensure(n * sizeof(int64_t), stream);
    m.validity[i].ensure(n, stream);
    args.values[i] = m.values[i].get<int64_t>();
    args.validity[i] = m.validity[i].get<uint8_t>();
  }
  args.mask = m.mask.get<uint8_t>();
  args.error = m.error.get<uint32_t>();
  // The steps are copied from pageable memory: the copy completes before
  // cudaMemcpyAsync returns, so host_steps may change after this call.
  if (!m.host_steps.empty()) {
    TALLY_CUDA_CHECK(cudaMemcpyAsync(m.steps.get(), m.host_steps.data(), m.host_steps.size() * sizeof(tally::ProgramStep),
                                     cudaMemcpyHostToDevice, stream));
  }
  if (!m.error_cleared) {
    TALLY_CUDA_CHECK(cudaMemsetAsync(m.error.get(), 0, sizeof(uint32_t), stream));
    m.error_cleared = true;
  }
  if (rows <= 0) return;
  const void* compiled = kernel == ProgramKernel::interpret ? nullptr : compiled_kernel(filter, inputs, args, kernel);
  if (kernel == ProgramKernel::interpret) m.not_compiled = "jit is off";
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((rows + threads - 1) / threads, 4096);
  const tally::ProgramStep* steps = m.steps.get<tally::ProgramStep>();
  ++m.launches;
  m.last_compiled = compiled != nullptr;
  if (compiled != nullptr) {
    ++m.compiled_launches;
    void* params[] = {&steps, &args, &rows};
    TALLY_CUDA_CHECK(cudaLaunchKernel(compiled, dim3(static_cast<unsigned>(blocks)), dim3(threads), params, 0, stream));
    return;
  }
  programs_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(steps, args, rows);
  TALLY_CUDA_CHECK_LAUNCH("programs_kernel");
}

const void* DeviceProgramEvaluator::compiled_kernel(const tally::ColumnProgram& filter,
                                                    const std::vector<tally::ColumnProgram>& inputs,
                                                    const ProgramArgs& args, ProgramKernel kernel) {
  Impl& m = *impl_;
  // The programs of one run repeat chunk after chunk: the source is written
  // and looked up once for them. It depends on the steps' operations and
  // args and the columns' shapes alone (values are read from the launch's
  // steps).
  std::vector<int> counts = {static_cast<int>(filter.steps.size())};
  for (const tally::ColumnProgram& p : inputs) counts.push_back(static_cast<int>(p.steps.size()));
  std::vector<int> shapes;
  for (int c = 0; c < args.column_count; ++c) shapes.push_back(tally::column_shape(args.columns[c]));
  const auto same_step = [](const tally::ProgramStep& a, const tally::ProgramStep& b) {
    return a.op == b.op && a.arg == b.arg;
  };
  const bool same = counts == m.compiled_counts && shapes == m.compiled_shapes &&
                    std::equal(m.host_steps.begin(), m.host_steps.end(), m.compiled_steps.begin(), m.compiled_steps.end(),
                               same_step);
  if (!same) {
    m.compiled_counts = std::move(counts);
    m.compiled_shapes = shapes;
    m.compiled_steps = m.host_steps;
    m.compiled.reset();
    m.not_compiled.clear();
    if (m.arch == 0) {
      int device = 0, major = 0, minor = 0;
      TALLY_CUDA_CHECK(cudaGetDevice(&device));
      TALLY_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
      TALLY_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
      m.arch = major * 10 + minor;
    }
    if (const std::optional<std::string> source = program_kernel_source(filter, inputs, shapes)) {
      m.compiled = compiled_programs(*source, m.arch, kernel == ProgramKernel::compile_now);
    } else {
      m.not_compiled = "the programs' steps do not nest";
    }
  }
  return m.compiled ? m.compiled->kernel.load(std::memory_order_acquire) : nullptr;
}

std::string DeviceProgramEvaluator::kernel_report() const {
  const Impl& m = *impl_;
  const std::string launches = std::to_string(m.compiled_launches) + " of " + std::to_string(m.launches) + " launches";
  if (m.compiled_launches > 0) {
    char took[48];
    std::snprintf(took, sizeof took, " in %.0f ms", m.compiled->compile_ms);
    return "compiled" + std::string(took) + " (" + program_compiler_state() + "), " + launches;
  }
  if (!m.not_compiled.empty()) return "interpreted: " + m.not_compiled;
  if (m.compiled && m.compiled->settled.load(std::memory_order_acquire) && !m.compiled->failure.empty())
    return "interpreted: " + m.compiled->failure;
  return "interpreted while " + program_compiler_state() + " compiles them";
}

bool DeviceProgramEvaluator::last_compiled() const { return impl_->last_compiled; }

void DeviceProgramEvaluator::set_lookups(const std::vector<tally::LookupColumn>& host, StreamHandle stream) {
  Impl& m = *impl_;
  m.lookup_copies.clear();
  m.texts.clear();
  m.lookups.clear();
  // The host arrays go out together, through pinned buffers on several
  // threads where they are large (a relation of millions of rows), before
  // the kernels that scatter keys read them.
  std::vector<HostCopy> copies;
  auto copy = [&](const void* data, size_t bytes) -> const void* {
    if (data == nullptr) return nullptr;
    m.lookup_copies.emplace_back(std::max<size_t>(bytes, 1), stream);
    copies.push_back(HostCopy{m.lookup_copies.back().get(), data, bytes});
    return m.lookup_copies.back().get();
  };
  struct Scatter {
    const int64_t* keys;
    const uint8_t* nulls;
    size_t count;
    int64_t base;
    uint64_t span;
    int32_t* rows;
    uint8_t* present;
  };
  std::vector<Scatter> scatters;
  for (const tally::LookupColumn& l : host) {
    const tally::ProgramColumn& c = l.column;
    tally::ProgramColumn d = c;
    if (l.from_text()) {
      // The verdict by code, matched here in the dictionary's bytes this
      // device keeps.
      m.texts.push_back(device_texts(*l.text->entries, l.text->count, stream));
      m.lookup_copies.emplace_back(std::max<size_t>(c.size * sizeof(int32_t), 1), stream);
      auto* verdicts = m.lookup_copies.back().get<int32_t>();
      match_device_texts(*m.texts.back(), l.text->count, l.text->pattern, verdicts, stream);
      d.data = verdicts;
      m.lookups.push_back(d);
      continue;
    }
    if (l.from_keys()) {
      // The build rows by key, scattered here from the rows' keys.
      m.lookup_copies.emplace_back(std::max<size_t>(c.size * sizeof(int32_t), 1), stream);
      auto* rows = m.lookup_copies.back().get<int32_t>();
      m.lookup_copies.emplace_back(std::max<size_t>(c.size, 1), stream);
      auto* present = m.lookup_copies.back().get<uint8_t>();
      TALLY_CUDA_CHECK(cudaMemsetAsync(present, 0, c.size, stream));
      const auto* keys = static_cast<const int64_t*>(copy(l.keys, l.key_count * sizeof(int64_t)));
      const auto* nulls = static_cast<const uint8_t*>(copy(l.key_nulls, l.key_count));
      if (l.key_count > 0) scatters.push_back(Scatter{keys, nulls, l.key_count, c.base, c.size, rows, present});
      d.data = rows;
      d.validity = present;
      m.lookups.push_back(d);
      continue;
    }
    d.data = copy(c.data, tally::lookup_column_bytes(c));
    d.validity = static_cast<const uint8_t*>(copy(c.validity, c.size));
    m.lookups.push_back(d);
  }
  copy_from_pageable(copies, stream);
  for (const Scatter& s : scatters) {
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((static_cast<int64_t>(s.count) + threads - 1) / threads, 4096);
    scatter_keys_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(s.keys, s.nulls, s.count, s.base, s.span,
                                                                               s.rows, s.present);
    TALLY_CUDA_CHECK_LAUNCH("scatter_keys_kernel");
  }
}

const uint8_t* DeviceProgramEvaluator::mask() const { return impl_->mask.get<uint8_t>(); }
const void* DeviceProgramEvaluator::input(size_t i) const { return impl_->values[i].get(); }
const uint8_t* DeviceProgramEvaluator::input_validity(size_t i) const { return impl_->validity[i].get<uint8_t>(); }

uint32_t DeviceProgramEvaluator::errors(StreamHandle stream) {
  uint32_t flags = 0;
  TALLY_CUDA_CHECK(cudaMemcpyAsync(&flags, impl_->error.get(), sizeof flags, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  return flags;
}

DeviceProgramResult evaluate_programs_on_device(const tally::ColumnProgram& filter,
                                                const std::vector<tally::ColumnProgram>& inputs,
                                                const std::vector<tally::ColumnView>& columns, int64_t rows,
                                                const std::vector<tally::LookupColumn>& lookups, ProgramKernel kernel) {
  cudaStream_t stream = nullptr;
  TALLY_CUDA_CHECK(cudaStreamCreate(&stream));
  struct Destroy {
    cudaStream_t s;
    ~Destroy() { (void)cudaStreamDestroy(s); }
  } destroy{stream};
  const size_t n = static_cast<size_t>(rows);
  std::vector<DeviceBuffer> copies;
  std::vector<ColumnPointer> pointers;
  std::vector<tally::ColumnWidth> widths;
  for (const tally::ColumnView& c : columns) {
    const size_t bytes = n * (c.width == tally::ColumnWidth::int32 || c.width == tally::ColumnWidth::float32 ? 4 : 8);
    copies.emplace_back(std::max<size_t>(bytes, 1), stream);
    TALLY_CUDA_CHECK(cudaMemcpyAsync(copies.back().get(), c.data, bytes, cudaMemcpyHostToDevice, stream));
    ColumnPointer p{copies.back().get(), nullptr};
    if (c.validity != nullptr) {
      copies.emplace_back(std::max<size_t>(n, 1), stream);
      TALLY_CUDA_CHECK(cudaMemcpyAsync(copies.back().get(), c.validity, n, cudaMemcpyHostToDevice, stream));
      p.validity = copies.back().get<uint8_t>();
    }
    pointers.push_back(p);
    widths.push_back(c.width);
  }
  DeviceProgramEvaluator evaluator;
  evaluator.set_lookups(lookups, stream);
  evaluator.evaluate(filter, inputs, pointers, widths, rows, stream, kernel);
  DeviceProgramResult out;
  out.mask.resize(n);
  TALLY_CUDA_CHECK(cudaMemcpyAsync(out.mask.data(), evaluator.mask(), n, cudaMemcpyDeviceToHost, stream));
  out.inputs.resize(inputs.size());
  out.validity.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;
    out.inputs[i].resize(n);
    out.validity[i].resize(n);
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.inputs[i].data(), evaluator.input(i), n * 8, cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.validity[i].data(), evaluator.input_validity(i), n, cudaMemcpyDeviceToHost, stream));
  }
  out.errors = evaluator.errors(stream);
  out.compiled = evaluator.last_compiled();
  return out;
}

}  // namespace tally::gpu
