#pragma once
// The first occurrence of a needle in a text at or after `from`, as
// std::string_view::find answers, for LIKE's '%word%' runs: find() looks for
// the needle's first byte with memchr and compares at every hit, so a needle
// starting with a common letter ("special" in English comments) costs a
// memchr and a memcmp every few bytes. Here 16 positions are tested at once
// for the needle's first and last bytes together (SSE2, every x86-64 has
// it), and only positions where both match are compared in full.
#include <cstddef>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tally::executor {

inline size_t find_substring(std::string_view text, std::string_view needle, size_t from = 0) {
  const size_t n = needle.size();
  if (from > text.size()) return std::string_view::npos;
  if (n == 0) return from;
#if defined(__SSE2__)
  if (n >= 2) {
    const char* t = text.data();
    const size_t size = text.size();
    const __m128i first = _mm_set1_epi8(needle[0]);
    const __m128i last = _mm_set1_epi8(needle[n - 1]);
    // The positions of a block of 16 starting at `at` where the needle
    // matches, from the lowest; `mask` keeps the ones still to look at.
    auto block = [&](size_t at, unsigned mask) -> size_t {
      const __m128i at_first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + at));
      const __m128i at_last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + at + n - 1));
      mask &= static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at_first, first), _mm_cmpeq_epi8(at_last, last))));
      while (mask != 0) {
        const unsigned bit = static_cast<unsigned>(__builtin_ctz(mask));
        if (n == 2 || std::memcmp(t + at + bit + 1, needle.data() + 1, n - 2) == 0) return at + bit;
        mask &= mask - 1;
      }
      return std::string_view::npos;
    };
    size_t i = from;
    // Blocks of 16 starting positions whose last byte (i + 15 + n - 1) is in the text.
    for (; i + 15 + n <= size; i += 16) {
      const size_t found = block(i, 0xFFFFu);
      if (found != std::string_view::npos) return found;
    }
    if (i + n > size) return std::string_view::npos;
    // Fewer than 16 starting positions are left: the block that ends at the
    // text's end, without the positions before i; a text shorter than a
    // block is searched as find() does.
    if (size < 15 + n) return text.find(needle, i);
    const size_t at = size - n - 15;
    return block(at, 0xFFFFu & (0xFFFFu << (i - at)));
  }
#endif
  return text.find(needle, from);
}

}  // namespace tally::executor
