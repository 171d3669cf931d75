// find_substring against std::string_view::find: texts over small alphabets
// (so that first and last bytes match often and full comparisons decide),
// needles of every length from 0 to past the text, every start position.
#include "executor/scalar/substring_search.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace tally::executor {
namespace {

std::string random_text(std::mt19937& rng, size_t size, const std::string& alphabet) {
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string s;
  for (size_t i = 0; i < size; ++i) s += alphabet[pick(rng)];
  return s;
}

TEST(SubstringSearch, AnswersAsStringViewFindEverywhere) {
  std::mt19937 rng(7);
  for (const std::string alphabet : {"ab", "abc", "abcdefghij"}) {
    for (size_t size : {0, 1, 2, 15, 16, 17, 31, 33, 64, 100}) {
      for (int trial = 0; trial < 20; ++trial) {
        const std::string text = random_text(rng, size, alphabet);
        for (size_t n = 0; n <= size + 1 && n <= 20; ++n) {
          // Needles cut from the text (present) and drawn at random (mostly absent).
          std::string needle = n <= size && size > 0 ? text.substr(rng() % (size - n + 1), n) : random_text(rng, n, alphabet);
          if (trial % 2 == 1) needle = random_text(rng, n, alphabet);
          for (size_t from = 0; from <= size + 1; ++from) {
            ASSERT_EQ(find_substring(text, needle, from), std::string_view(text).find(needle, from))
                << "text '" << text << "' needle '" << needle << "' from " << from;
          }
        }
      }
    }
  }
}

TEST(SubstringSearch, FindsTheLeftmostOfOverlappingMatches) {
  const std::string text = std::string(40, 'x') + "specspecial requests special";
  EXPECT_EQ(find_substring(text, "special"), 44u);
  EXPECT_EQ(find_substring(text, "special", 45), 61u);
  EXPECT_EQ(find_substring(text, "requests"), 52u);
  EXPECT_EQ(find_substring(text, "zz"), std::string_view::npos);
}

}  // namespace
}  // namespace tally::executor
