#include "executor/row_encoder.hpp"

#include "executor/numeric_field_writer.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::row_encoding {

namespace {

// Encodes rows [begin, end) as framed DataRow messages appended to `out` (a
// std::string or RawBuffer, grown as needed); calls `batch_done` every
// kAppendBatchBytes with `out` trimmed to what was written.
template <class Buffer, class BatchDone>
void encode_rows_generic(std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out,
                         BatchDone batch_done) {
  const size_t ncols = columns.size();
  size_t fixed = 1 + 4 + 2;
  bool all_fixed = true;  // every field has a fixed bound: no per-row bound pass
  for (const auto& c : columns) {
    fixed += fixed_bound(c.coder);
    all_fixed &= c.coder < FieldCoder::raw_text;
  }
  size_t pos = out.size();
  size_t batch_start = pos;
  // The buffer is grown ahead of what is written: whatever ends this loop
  // (an encoding error included) must leave only whole messages in it.
  struct Trim {
    Buffer& out;
    size_t& pos;
    ~Trim() { out.resize(pos); }
  } trim{out, pos};
  for (size_t row = begin; row < end; ++row) {
    size_t bound = fixed;
    for (auto& c : columns) {
      if (all_fixed) break;
      if (c.coder < FieldCoder::raw_text || c.v->null_at(row)) continue;
      if (c.coder == FieldCoder::raw_text) { bound += c.v->text_at(row).size(); continue; }
      if (c.coder == FieldCoder::avg_text || c.coder == FieldCoder::avg_binary) {
        c.avg = avg_at(*c.v, row);
        const FieldCoder as = c.coder == FieldCoder::avg_text ? FieldCoder::numeric_text : FieldCoder::numeric_binary;
        c.use_scratch = !numeric_fast(as, c.avg);
        if (!c.use_scratch) {
          bound += as == FieldCoder::numeric_text ? kNumericTextBound : kNumericBinaryBound;
          continue;
        }
        // Out of the direct writers' bounds (never for an avg of int2/int4
        // in practice): value_codec's text or binary of a one-value column.
        Vector one(c.v->type);
        one.numerics.push_back(c.avg);
        one.count = 1;
        c.scratch.clear();
        if (as == FieldCoder::numeric_text) append_text(c.scratch, one, 0);
        else append_binary(c.scratch, one, 0);
        bound += c.scratch.size();
        continue;
      }
      if (c.coder == FieldCoder::numeric_text || c.coder == FieldCoder::numeric_binary) {
        c.use_scratch = !numeric_fast(c.coder, c.v->numerics[row]);
        if (!c.use_scratch) {
          bound += c.coder == FieldCoder::numeric_text ? kNumericTextBound : kNumericBinaryBound;
          continue;
        }
      }
      c.scratch.clear();
      if (c.coder == FieldCoder::generic_text || c.coder == FieldCoder::numeric_text) append_text(c.scratch, *c.v, row);
      else append_binary(c.scratch, *c.v, row);
      bound += c.scratch.size();
    }
    // One resize per append batch (resizing zero-fills: grow once, not by doubling).
    if (out.size() < pos + bound) out.resize(pos + bound + (end - row > 1 ? kAppendBatchBytes : 0));
    char* const message = out.data() + pos;
    char* p = message + 5;
    p = put_be16(p, static_cast<uint16_t>(ncols));
    for (auto& c : columns) {
      const Vector& v = *c.v;
      if (v.null_at(row)) {
        p = put_be32(p, UINT32_MAX);  // -1: NULL
        continue;
      }
      if (c.coder < FieldCoder::raw_text) {
        p = write_fixed_field(p, c.coder, v.int_data(), v.floats.data(), row);
        continue;
      }
      switch (c.coder) {
        case FieldCoder::raw_text: {
          const std::string_view s = v.text_at(row);
          p = put_be32(p, static_cast<uint32_t>(s.size()));
          std::memcpy(p, s.data(), s.size());
          p += s.size();
          break;
        }
        case FieldCoder::avg_text:
        case FieldCoder::avg_binary:
        case FieldCoder::numeric_text:
        case FieldCoder::numeric_binary:
          if (!c.use_scratch) {
            // Within the direct writers' bounds (the bound pass decided).
            const bool avg = c.coder == FieldCoder::avg_text || c.coder == FieldCoder::avg_binary;
            const Numeric& n = avg ? c.avg : v.numerics[row];
            if (c.coder == FieldCoder::avg_binary || c.coder == FieldCoder::numeric_binary) {
              p = write_numeric_binary(p, n);
            } else {
              char* stop = write_numeric_text(p + 4, n);
              put_be32(p, static_cast<uint32_t>(stop - p - 4));
              p = stop;
            }
            break;
          }
          [[fallthrough]];  // the field the bound pass encoded into scratch
        case FieldCoder::generic_text:
        case FieldCoder::generic_binary:
          p = put_be32(p, static_cast<uint32_t>(c.scratch.size()));
          std::memcpy(p, c.scratch.data(), c.scratch.size());
          p += c.scratch.size();
          break;
        default:  // the fixed-width coders, written above
          break;
      }
    }
    message[0] = 'D';
    put_be32(message + 1, static_cast<uint32_t>(p - message - 1));
    pos = static_cast<size_t>(p - out.data());
    if (pos - batch_start >= kAppendBatchBytes) {
      out.resize(pos);
      batch_done();
      pos = batch_start = out.size();
    }
  }
}

// The lean row writer: results whose every field has a fixed bound
// (integers, booleans, binary floats) or is an avg left as int64 sums and
// counts (AvgParts) -- the shape of large GROUP BY results. One bound per
// row known up front (no per-row bound pass), the avg computed where it is
// written, and the column descriptors copied into a local array so that the
// byte stores into the message (char stores may alias anything) do not make
// the compiler reload every Vector's data pointer after each field, as the
// generic writer above does.
constexpr size_t kLeanMaxColumns = 32;

struct LeanColumn {
  FieldCoder coder;
  const int64_t* ints;    // integers and booleans; an avg's sums
  const int64_t* counts;  // an avg's counts
  const double* floats;
  const uint8_t* nulls;   // nullptr: no NULL in the column
};

bool lean_shape(const std::vector<ColumnCoder>& columns) {
  if (columns.size() > kLeanMaxColumns) return false;
  for (const ColumnCoder& c : columns) {
    if (c.coder >= FieldCoder::raw_text && c.coder != FieldCoder::avg_text && c.coder != FieldCoder::avg_binary) {
      return false;
    }
  }
  return true;
}

template <class Buffer, class BatchDone>
void encode_rows_lean(const std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out,
                      BatchDone batch_done) {
  LeanColumn cols[kLeanMaxColumns];
  const size_t ncols = columns.size();
  size_t bound = 1 + 4 + 2;
  for (size_t i = 0; i < ncols; ++i) {
    const Vector& v = *columns[i].v;
    const FieldCoder coder = columns[i].coder;
    cols[i] = LeanColumn{coder, v.int_data(), nullptr, v.floats.data(), v.nulls.empty() ? nullptr : v.nulls.data()};
    if (coder == FieldCoder::avg_text || coder == FieldCoder::avg_binary) {
      cols[i].ints = v.avg_parts->sum.data();
      cols[i].counts = v.avg_parts->counts();
      bound += coder == FieldCoder::avg_text ? kNumericTextBound : kNumericBinaryBound;
    } else {
      bound += fixed_bound(coder);
    }
  }
  size_t pos = out.size();
  size_t batch_start = pos;
  struct Trim {
    Buffer& out;
    size_t& pos;
    ~Trim() { out.resize(pos); }
  } trim{out, pos};
  // Grown a batch (or the rows left) at a time: a std::string zero-fills
  // what it grows into, so a small result must not grow it by a megabyte.
  const size_t batch_rows = kAppendBatchBytes / bound + 1;
  for (size_t row = begin; row < end; ++row) {
    if (out.size() < pos + bound) out.resize(pos + bound * std::min(end - row, batch_rows));
    char* message = out.data() + pos;
    char* p = message + 5;
    p = put_be16(p, static_cast<uint16_t>(ncols));
    for (size_t i = 0; i < ncols; ++i) {
      const LeanColumn& c = cols[i];
      if (c.nulls != nullptr && c.nulls[row] != 0) {
        p = put_be32(p, UINT32_MAX);  // -1: NULL
        continue;
      }
      if (c.coder < FieldCoder::raw_text) {
        p = write_fixed_field(p, c.coder, c.ints, c.floats, row);
        continue;
      }
      // The rest are avg_text and avg_binary (lean_shape admits nothing else).
      const int64_t sum = c.ints[row], count = c.counts[row];
      const Numeric avg = avg_of_int64(sum, count);
      const bool binary = c.coder == FieldCoder::avg_binary;
      if (!binary && avg.scale <= kAvgExactMaxScale && (count == 1 || (count == 2 && avg.scale >= 1))) {
        char* stop = write_exact_avg_text(p + 4, sum, count, avg.scale);
        put_be32(p, static_cast<uint32_t>(stop - p - 4));
        p = stop;
        continue;
      }
      if (numeric_fast(binary ? FieldCoder::numeric_binary : FieldCoder::numeric_text, avg)) {
        if (binary) {
          p = write_numeric_binary(p, avg);
        } else {
          char* stop = write_numeric_text(p + 4, avg);
          put_be32(p, static_cast<uint32_t>(stop - p - 4));
          p = stop;
        }
        continue;
      }
      // Longer than the bound this row reserved: grow, then go on at the same offsets.
      const std::string field = avg_field_slow(*columns[i].v, avg, binary);
      const size_t at = static_cast<size_t>(p - out.data());
      if (out.size() < at + field.size() + bound) out.resize(at + field.size() + bound);
      message = out.data() + pos;
      p = out.data() + at;
      std::memcpy(p, field.data(), field.size());
      p += field.size();
    }
    message[0] = 'D';
    put_be32(message + 1, static_cast<uint32_t>(p - message - 1));
    pos = static_cast<size_t>(p - out.data());
    if (pos - batch_start >= kAppendBatchBytes) {
      out.resize(pos);
      batch_done();
      pos = batch_start = out.size();
    }
  }
}

}  // namespace

template <class Buffer>
void encode_rows(std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out,
                 const std::function<void()>& batch_done) {
  if (lean_shape(columns)) encode_rows_lean(columns, begin, end, out, batch_done);
  else encode_rows_generic(columns, begin, end, out, batch_done);
}

template void encode_rows<std::string>(std::vector<ColumnCoder>&, size_t, size_t, std::string&,
                                       const std::function<void()>&);
template void encode_rows<RawBuffer>(std::vector<ColumnCoder>&, size_t, size_t, RawBuffer&,
                                     const std::function<void()>&);

}  // namespace tally::executor::row_encoding
