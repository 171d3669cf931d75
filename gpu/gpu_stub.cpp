// The GPU engine's entry points in a build without CUDA (-DTALLY_CUDA=OFF or no
// nvcc): no device exists, and anything that would need one says so cleanly.
#include "common/error.hpp"
#include "gpu/aggregator/group_by_impl.hpp"
#include "gpu/engine/device_ordered_rows.hpp"
#include "gpu/engine/start_up.hpp"
#include "gpu/group_by.hpp"
#include "gpu/ordered_values_sort.hpp"
#include "gpu/pipeline/chunk_pipeline.hpp"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/program_compiler.hpp"
#include "gpu/pipeline/key_packing.hpp"
#include "gpu/pipeline/row_compaction.hpp"
#include "gpu/pipeline/row_selector.hpp"
#include "gpu/pipeline/tuple_keys.hpp"
#include "gpu/pipeline/zero_column.hpp"
#include "gpu/rules/device_info.hpp"

namespace tally::gpu {

namespace {
[[noreturn]] void no_gpu() {
  throw Error(SqlState::internal_error, "GPU: this build of Tally has no CUDA support");
}
}  // namespace

bool built_with_cuda() { return false; }
bool sort_segments_on_device(uint64_t*, size_t, const uint64_t*, size_t) { return false; }
std::unique_ptr<tally::OrderedRowsCollector> make_device_ordered_rows(GpuEngine&, const tally::AggregationSpec&, uint64_t) {
  return nullptr;
}
int device_count() { return 0; }
DeviceProgramResult evaluate_programs_on_device(const tally::ColumnProgram&, const std::vector<tally::ColumnProgram>&,
                                                const std::vector<tally::ColumnView>&, int64_t,
                                                const std::vector<tally::LookupColumn>&, ProgramKernel) {
  no_gpu();
}
struct DeviceProgramEvaluator::Impl {};
DeviceProgramEvaluator::DeviceProgramEvaluator() { no_gpu(); }
DeviceProgramEvaluator::~DeviceProgramEvaluator() = default;
void DeviceProgramEvaluator::evaluate(const tally::ColumnProgram&, const std::vector<tally::ColumnProgram>&,
                                      const std::vector<ColumnPointer>&, const std::vector<tally::ColumnWidth>&, int64_t,
                                      StreamHandle, ProgramKernel) {
  no_gpu();
}
void DeviceProgramEvaluator::set_lookups(const std::vector<tally::LookupColumn>&, StreamHandle) { no_gpu(); }
const uint8_t* DeviceProgramEvaluator::mask() const { no_gpu(); }
const void* DeviceProgramEvaluator::input(size_t) const { no_gpu(); }
const uint8_t* DeviceProgramEvaluator::input_validity(size_t) const { no_gpu(); }
uint32_t DeviceProgramEvaluator::errors(StreamHandle) { no_gpu(); }
std::string DeviceProgramEvaluator::kernel_report() const { no_gpu(); }
std::string program_cubin(const std::string&, int, std::string&) { return "built without CUDA"; }
std::string program_compiler_state() { return "built without CUDA"; }
void warm_program_compiler(int) {}
void finish_program_compiles() {}
std::shared_ptr<const CompiledPrograms> compiled_programs(const std::string&, int, bool) {
  auto entry = std::make_shared<CompiledPrograms>();
  entry->failure = "built without CUDA";
  entry->settled.store(true);
  return entry;
}
bool DeviceProgramEvaluator::last_compiled() const { no_gpu(); }
struct RowCompactor::Impl {};
RowCompactor::RowCompactor() { no_gpu(); }
RowCompactor::~RowCompactor() = default;
int64_t RowCompactor::select(const uint8_t*, int64_t, StreamHandle) { no_gpu(); }
ColumnPointer RowCompactor::gather(size_t, ColumnPointer, uint32_t, StreamHandle) { no_gpu(); }
const int32_t* RowCompactor::selected_rows() const { no_gpu(); }
struct DeviceBitmaps::Impl {};
DeviceBitmaps::DeviceBitmaps() { no_gpu(); }
DeviceBitmaps::~DeviceBitmaps() = default;
const uint64_t* DeviceBitmaps::add(const uint64_t*, size_t, StreamHandle) { no_gpu(); }
struct RowSelector::Impl {};
RowSelector::RowSelector() { no_gpu(); }
RowSelector::~RowSelector() = default;
bool RowSelector::select(const tally::ColumnProgram&, const std::vector<ColumnPointer>&,
                         const std::vector<tally::ColumnWidth>&, int64_t, const std::vector<DeviceKeyTest>&, uint32_t,
                         StreamHandle, std::vector<uint32_t>&, ProgramKernel) {
  no_gpu();
}
void RowSelector::use_lookups(uint64_t, const std::vector<tally::ProgramColumn>&, StreamHandle) { no_gpu(); }
struct ZeroColumn::Impl {};
ZeroColumn::ZeroColumn() { no_gpu(); }
ZeroColumn::~ZeroColumn() = default;
const void* ZeroColumn::get(int64_t, uint32_t, StreamHandle) { no_gpu(); }
DeviceInfo query_device(int) { no_gpu(); }
std::vector<DeviceInfo> list_devices() { return {}; }
void use_device(int) { no_gpu(); }

GroupByAggregator::GroupByAggregator(const DeviceInfo&, GroupBySpec, TableOptions, StreamHandle) { no_gpu(); }
GroupByAggregator::~GroupByAggregator() = default;
LaunchReport GroupByAggregator::consume(const ChunkPointers&, Variant, const VariantConfig&) { no_gpu(); }
LaunchReport GroupByAggregator::consume_host(const ChunkPointers&, Variant, const VariantConfig&) { no_gpu(); }
KeyRange GroupByAggregator::measure_key_range(const ChunkPointers&) { no_gpu(); }
GroupByResult GroupByAggregator::finish() { no_gpu(); }
void GroupByAggregator::begin_finish() { no_gpu(); }
void GroupByAggregator::prepare_result() { no_gpu(); }
void GroupByAggregator::keep_groups_where(std::vector<GroupTest>) { no_gpu(); }
uint64_t GroupByAggregator::group_count() { no_gpu(); }
void GroupByAggregator::reset() { no_gpu(); }
void GroupByAggregator::finish_device() { no_gpu(); }
uint64_t GroupByAggregator::table_capacity() const { no_gpu(); }
const GroupBySpec& GroupByAggregator::spec() const { no_gpu(); }
void GroupByAggregator::synchronize() { no_gpu(); }

// Nothing allocates device memory without CUDA: a DeviceColumn holds none.
DeviceColumn::~DeviceColumn() = default;
struct ChunkPipeline::Impl {};
ChunkPipeline::ChunkPipeline(int, ColumnCache*) { no_gpu(); }
ChunkPipeline::~ChunkPipeline() = default;
StreamHandle ChunkPipeline::compute_stream() const { no_gpu(); }
StagedChunk ChunkPipeline::stage(int64_t, const std::vector<HostColumn>&) { no_gpu(); }
uint64_t ChunkPipeline::run(StagedChunk&, const std::function<void()>&) { no_gpu(); }
std::vector<ChunkTiming> ChunkPipeline::completed(bool) { no_gpu(); }
std::vector<ChunkTiming> ChunkPipeline::completed_through(uint64_t) { no_gpu(); }
size_t ChunkPipeline::in_flight() const { return 0; }
void ChunkPipeline::release(StagedChunk&) {}
const char* ChunkPipeline::join_refusal(const StagedChunk&, const StagedChunk&) { return "no GPU"; }
void ChunkPipeline::join(StagedChunk&, StagedChunk&&) { no_gpu(); }
struct KeyPacker::Impl {};
KeyPacker::KeyPacker() = default;
KeyPacker::~KeyPacker() = default;
const int64_t* KeyPacker::pack(const std::vector<tally::KeyPart>&, const ColumnPointer*, const uint32_t*, int64_t,
                               StreamHandle) {
  no_gpu();
}
struct TupleKeyTable::Impl {};
TupleKeyTable::TupleKeyTable(size_t, uint64_t) {}
TupleKeyTable::~TupleKeyTable() = default;
const int64_t* TupleKeyTable::assign(const ColumnPointer*, const uint32_t*, int64_t, StreamHandle) { no_gpu(); }
void TupleKeyTable::values_of(const int64_t*, size_t, const std::vector<GroupByResult::DeviceKeys>&, uint32_t,
                              std::vector<std::vector<int64_t>>&, std::vector<std::vector<int32_t>>&,
                              std::vector<std::vector<uint8_t>>&, StreamHandle) {
  no_gpu();
}
uint64_t TupleKeyTable::tuples() const { return 0; }
int TupleKeyTable::growths() const { return 0; }
void prepare_for_queries(const DeviceInfo&) {}
FirstUseSnapshot first_use_snapshot(int) {
  FirstUseSnapshot s;
  s.pinned_allocations = first_use_counts().pinned_allocations.load();
  s.pinned_bytes = first_use_counts().pinned_bytes.load();
  s.kernel_first_lookups = first_use_counts().kernel_first_lookups.load();
  return s;
}
LaunchPathWarmUp warm_launch_paths(const DeviceInfo&, double) { return {}; }
bool rehearse_aggregation(const DeviceInfo&, const GroupBySpec&, Variant, const VariantConfig&, const TableOptions&, int64_t,
                          uint64_t) {
  return false;
}

}  // namespace tally::gpu
