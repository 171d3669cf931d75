#pragma once
// CPU reference for the GPU GROUP BY tests: exact (128-bit sums), NULL-aware,
// independent of the GPU code.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "gpu/group_by_spec.hpp"

namespace tally::gpu::test {

// One test table: int64 storage for every column, narrowed when uploaded.
struct TestTable {
  KeyType key_type = KeyType::int32;
  std::vector<int64_t> keys;
  std::vector<uint8_t> key_valid;  // empty = no NULL keys
  std::vector<ValueType> value_types;
  std::vector<std::vector<int64_t>> values;
  std::vector<std::vector<uint8_t>> value_valid;  // per column; empty = no NULLs
  size_t rows() const { return keys.size(); }
};

// Host buffers in the physical widths the GPU expects, kept alive with the pointers.
struct HostChunk {
  std::vector<int32_t> keys32;
  std::vector<int64_t> keys64;
  std::vector<std::vector<int32_t>> values32;
  std::vector<std::vector<int64_t>> values64;
  ChunkPointers pointers;
};
HostChunk make_host_chunk(const TestTable& t, size_t begin, size_t end);

struct GroupValue {
  std::vector<__int128> value;
  std::vector<int64_t> nonnull;
};
// Key (nullopt = the NULL group) -> per aggregate (value, nonnull).
using GroupMap = std::map<std::optional<int64_t>, GroupValue>;

GroupMap reference_group_by(const TestTable& t, const GroupBySpec& spec);
GroupMap to_map(const GroupByResult& r);

}  // namespace tally::gpu::test
