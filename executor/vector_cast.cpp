#include "executor/vector_cast.hpp"

#include <cstdint>
#include <limits>
#include <string_view>

namespace tally::executor {

VectorKernel vector_integer_cast(SqlType from, SqlType to) {
  if (!is_integer(from.id) || !is_integer(to.id) || to.typmod >= 0) return {};
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  if (to.id == TypeId::int2) { lo = INT16_MIN; hi = INT16_MAX; }
  if (to.id == TypeId::int4) { lo = INT32_MIN; hi = INT32_MAX; }
  return [lo, hi](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& a = *args[0];
    if (a.ints.size() < rows) return false;  // not this physical layout: row-wise
    bool in_range = true;
    for (size_t i = 0; i < rows; ++i) in_range &= a.null_at(i) || (a.ints[i] >= lo && a.ints[i] <= hi);
    if (!in_range) return false;
    out.ints.assign(a.ints.begin(), a.ints.begin() + static_cast<std::ptrdiff_t>(rows));
    if (!a.nulls.empty()) out.nulls.assign(a.nulls.begin(), a.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
    out.count = rows;
    return true;
  };
}

VectorKernel vector_text_cast(SqlType from, SqlType to) {
  auto same_text = [](TypeId id) { return id == TypeId::text || id == TypeId::varchar; };
  if (!same_text(to.id) || to.typmod >= 0) return {};
  if (from.id == TypeId::bpchar) {
    // char(n) -> text drops the padding (cast_value's rule): the strings
    // without their trailing blanks, each read where it is held.
    return [](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
      const Vector& a = *args[0];
      if (!a.coded() && a.texts.size() < rows) return false;
      out.dictionary.reset();
      out.codes.clear();
      out.texts.resize(rows);
      for (size_t i = 0; i < rows; ++i) {
        if (a.null_at(i)) {
          out.texts[i].clear();
          continue;
        }
        std::string_view s = a.text_at(i);
        while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
        out.texts[i].assign(s);
      }
      if (!a.nulls.empty()) out.nulls.assign(a.nulls.begin(), a.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
      out.count = rows;
      return true;
    };
  }
  if (!same_text(from.id)) return {};
  return [](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& a = *args[0];
    if (a.coded()) {
      // The same strings: the same codes of the same dictionary.
      out.texts.clear();
      out.dictionary = a.dictionary;
      out.codes.assign(a.codes.begin(), a.codes.begin() + static_cast<std::ptrdiff_t>(rows));
      if (!a.nulls.empty()) out.nulls.assign(a.nulls.begin(), a.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
      out.count = rows;
      return true;
    }
    if (a.texts.size() < rows) return false;
    out.texts.assign(a.texts.begin(), a.texts.begin() + static_cast<std::ptrdiff_t>(rows));
    if (!a.nulls.empty()) out.nulls.assign(a.nulls.begin(), a.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
    out.count = rows;
    return true;
  };
}

}  // namespace tally::executor
