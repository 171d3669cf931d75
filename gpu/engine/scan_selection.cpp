#include "gpu/engine/scan_selection.hpp"

#include <chrono>
#include <cstdio>

#include "common/error.hpp"
#include "common/log.hpp"
#include "gpu/engine/gpu_aggregation_engine.hpp"
#include "gpu/engine/spec_translation.hpp"

namespace tally::gpu {

GpuScanSelection::GpuScanSelection(GpuAggregationEngine& engine, tally::ScanSelectionSpec spec)
    : engine_(engine), spec_(std::move(spec)) {
  static std::atomic<uint64_t> selections{0};
  id_ = selections.fetch_add(1, std::memory_order_relaxed) + 1;
  if (spec_.key_tests.empty()) return;
  PipelineLease lease(engine_, PipelineLease::Use::selection);
  bitmaps_ = std::make_unique<DeviceBitmaps>();
  for (const tally::SelectionKeyTest& t : spec_.key_tests) {
    // The span's words and the zero word past it, as the host keeps them.
    const uint64_t* bits = bitmaps_->add(t.bits, t.span / 64 + 1, lease.pooled.pipeline->compute_stream());
    tests_.push_back(DeviceKeyTest{t.column, bits, t.min, t.span, t.shift});
  }
}

GpuScanSelection::~GpuScanSelection() = default;

bool GpuScanSelection::select(const tally::SelectionPiece& piece, std::vector<uint32_t>& out) {
  if (failed_.load(std::memory_order_relaxed)) {
    host_pieces_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    PipelineLease lease(engine_, PipelineLease::Use::selection);
    PooledPipeline& pooled = lease.pooled;
    if (!pooled.selector) pooled.selector = std::make_unique<RowSelector>();
    ChunkPipeline& pipeline = *pooled.pipeline;
    if (!spec_.lookups.empty()) pooled.selector->use_lookups(id_, spec_.lookups, pipeline.compute_stream());
    std::vector<HostColumn> columns(spec_.columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      HostColumn& c = columns[i];
      c.data = piece.host[i].data;
      c.validity = piece.host[i].validity;
      c.width_bytes = width_bytes(spec_.widths[i]);
      c.cacheable = true;
      c.key = ColumnKey{spec_.table, piece.chunk, spec_.columns[i], static_cast<uint8_t>(c.width_bytes)};
    }
    StagedChunk staged = pipeline.stage(static_cast<int64_t>(piece.rows), columns);
    copied_bytes_.fetch_add(staged.copied_bytes, std::memory_order_relaxed);
    // The piece's rows of the chunk's device columns.
    std::vector<ColumnPointer> rows_of_piece = staged.columns;
    for (size_t i = 0; i < rows_of_piece.size(); ++i) {
      ColumnPointer& p = rows_of_piece[i];
      p.data = static_cast<const char*>(p.data) + piece.begin * staged.widths[i];
      if (p.validity) p.validity += piece.begin;
    }
    const auto rows = static_cast<int64_t>(piece.end - piece.begin);
    bool selected = false;
    pipeline.run(staged, [&] {
      selected = pooled.selector->select(spec_.filter, rows_of_piece, spec_.widths, rows, tests_,
                                         static_cast<uint32_t>(piece.begin), pipeline.compute_stream(), out,
                                         spec_.compile_programs ? ProgramKernel::compile : ProgramKernel::interpret);
    });
    (void)pipeline.completed(true);
    if (!selected) {
      host_pieces_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } catch (const Error& e) {
    // A device error or no device memory: this and every later piece of the
    // scan are filtered on the host.
    if (!failed_.exchange(true)) log::warning("gpu_selection_failed", {{"error", e.what()}});
    out.clear();
    host_pieces_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  pieces_.fetch_add(1, std::memory_order_relaxed);
  rows_.fetch_add(piece.end - piece.begin, std::memory_order_relaxed);
  passed_.fetch_add(out.size(), std::memory_order_relaxed);
  device_us_.fetch_add(static_cast<uint64_t>(
                           std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count()),
                       std::memory_order_relaxed);
  return true;
}

std::vector<std::string> GpuScanSelection::report() const {
  char line[256];
  std::snprintf(line, sizeof line,
                "Selected on GPU: %llu of %llu rows in %llu pieces (%.1f ms on the workers' threads, %.1f MB copied "
                "to the device), %llu pieces on the host",
                static_cast<unsigned long long>(passed_.load()), static_cast<unsigned long long>(rows_.load()),
                static_cast<unsigned long long>(pieces_.load()), static_cast<double>(device_us_.load()) / 1000.0,
                static_cast<double>(copied_bytes_.load()) / 1e6, static_cast<unsigned long long>(host_pieces_.load()));
  return {line};
}

}  // namespace tally::gpu
