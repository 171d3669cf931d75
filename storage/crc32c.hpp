#pragma once
// CRC32C (Castagnoli), the checksum of chunk and dictionary files. Uses the
// SSE4.2 crc32 instruction when the CPU has it (~10 GB/s), a table otherwise.
#include <cstddef>
#include <cstdint>

namespace tally::storage {

// Extends crc (0 for a fresh checksum) over size bytes.
uint32_t crc32c(uint32_t crc, const void* data, size_t size);

}  // namespace tally::storage
