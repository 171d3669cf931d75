#pragma once
// Encodes a result's rows [begin, end) as framed DataRow messages into a
// buffer, one column coder per column: a lean writer for results whose
// fields all have a fixed bound (the shape of large GROUP BY results) and a
// generic one for the rest, byte for byte the same output.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/field_writer.hpp"
#include "executor/finalize.hpp"
#include "executor/value.hpp"

namespace tally::executor::row_encoding {

// Bytes appended between calls to data_rows_appended(), which the wire
// writer turns into one send(): large enough that a large result costs few
// sends and context switches (64 KB cost a 10M-row scan a fifth more CPU),
// small enough to start sending early.
constexpr size_t kAppendBatchBytes = 1024 * 1024;

struct ColumnCoder {
  const Vector* v;
  FieldCoder coder;
  std::string scratch;  // generic coders (and numerics out of bounds): this row's field
  bool use_scratch = false;
  Numeric avg;  // avg coders: this row's value, from the bound pass
};

// An AvgParts row's value (count > 0: NULL rows are marked in `nulls`).
inline Numeric avg_at(const Vector& v, size_t row) {
  return avg_of_int64(v.avg_parts->sum[row], v.avg_parts->counts()[row]);
}

// A growable byte buffer that, unlike std::string, does not zero what it
// grows into (encode_rows writes every byte it keeps): a helper's block of
// DataRows is written once, not zeroed first.
class RawBuffer {
 public:
  size_t size() const { return size_; }
  char* data() { return data_.get(); }
  std::string_view view() const { return {data_.get(), size_}; }
  void clear() { size_ = 0; }
  void resize(size_t n) {
    if (n > capacity_) {
      const size_t capacity = std::max(n, capacity_ * 2);
      auto fresh = std::make_unique_for_overwrite<char[]>(capacity);
      if (size_ > 0) std::memcpy(fresh.get(), data_.get(), size_);
      data_ = std::move(fresh);
      capacity_ = capacity;
    }
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

// Encodes rows [begin, end) as framed DataRow messages appended to `out`
// (grown as needed); calls `batch_done` every kAppendBatchBytes with `out`
// trimmed to what was written. Defined for std::string and RawBuffer.
template <class Buffer>
void encode_rows(std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out,
                 const std::function<void()>& batch_done);

}  // namespace tally::executor::row_encoding
