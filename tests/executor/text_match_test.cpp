// LIKE's patterns of literal runs and '%' matched by common/text_match.hpp
// (the code the device runs over a dictionary's bytes) answer as the
// executor's LikePattern, text by text; a LIKE over a column of more
// dictionary entries than the compiler lists codes for compiles to a lookup
// of verdicts by code (matched by the engine where a GPU may run the
// programs, else evaluated once per entry), and the host's evaluation of it
// answers as the expression, NULLs included.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/column_program_run.hpp"
#include "common/text_match.hpp"
#include "executor/binder.hpp"
#include "executor/column_program_compiler.hpp"
#include "executor/expression.hpp"
#include "executor/scalar_functions.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {
namespace {

std::string random_text(std::mt19937_64& rng, const std::string& alphabet, size_t max_length) {
  std::string s(rng() % (max_length + 1), ' ');
  for (char& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

TEST(TextMatch, RunsAnswerAsLikePattern) {
  std::mt19937_64 rng(11);
  size_t matched = 0, taken = 0;
  for (int p = 0; p < 3000; ++p) {
    const std::string pattern = random_text(rng, "ab%%", 7);
    const std::optional<RunsPattern> runs = runs_pattern(pattern);
    ASSERT_TRUE(runs.has_value()) << pattern;
    ++taken;
    const LikePattern like(pattern, false);
    for (int t = 0; t < 40; ++t) {
      const std::string text = random_text(rng, "abc", 9);
      const bool expected = like.matches(text);
      ASSERT_EQ(runs_match(text.data(), text.size(), *runs), expected) << "'" << text << "' LIKE '" << pattern << "'";
      matched += expected;
    }
  }
  EXPECT_GT(matched, taken * 2);  // the random patterns match often enough to tell
  const std::string comment = "carefully final special packages wake; furiously pending requests";
  const std::optional<RunsPattern> special = runs_pattern("%special%requests%");
  ASSERT_TRUE(special.has_value());
  EXPECT_TRUE(runs_match(comment.data(), comment.size(), *special));
  EXPECT_FALSE(runs_match(comment.data(), 40, *special));
}

TEST(TextMatch, PatternsBeyondRunsAreLeftToTheHost) {
  EXPECT_FALSE(runs_pattern("a_c").has_value());
  EXPECT_FALSE(runs_pattern("50\\%%").has_value());
  EXPECT_FALSE(runs_pattern(std::string(200, 'x') + "%").has_value());
  std::string many;
  for (int r = 0; r < 20; ++r) many += "%x";
  EXPECT_FALSE(runs_pattern(many).has_value());
  EXPECT_TRUE(runs_pattern("").has_value());
  EXPECT_TRUE(runs_pattern("%").has_value());
}

TEST(TextMatch, LikeOverALargeDictionaryLooksUpVerdictsByCode) {
  const int32_t entries = static_cast<int32_t>(kTextConditionEntries) + 5000;
  auto dictionary = std::make_shared<storage::StringDictionary>();
  std::mt19937_64 rng(3);
  while (dictionary->size() < entries) dictionary->intern(random_text(rng, "abcs", 12));
  const size_t rows = 200000;
  std::vector<int32_t> codes(rows);
  std::vector<uint8_t> valid(rows);
  for (size_t r = 0; r < rows; ++r) {
    codes[r] = static_cast<int32_t>(rng() % static_cast<uint64_t>(entries));
    valid[r] = rng() % 10 != 0;
  }
  const std::vector<ColumnView> views = {{ColumnWidth::int32, codes.data(), valid.data(), {}}};
  for (const std::string op : {"~~", "!~~"}) {
    for (const std::string pattern : {"%ab%c%", "a%", "%sa", "bab"}) {
      BindContext context;
      const ExprPtr like = make_binary_operator(op, std::make_unique<ColumnExpr>(SqlType{TypeId::text}, 0),
                                                std::make_unique<ConstExpr>(SqlType{TypeId::text}, Value{pattern}),
                                                context);
      for (const bool on_device : {false, true}) {
        // Where a GPU may run the programs, it matches the dictionary's
        // entries itself; elsewhere the host evaluates the LIKE once per
        // entry and the verdicts go with the program.
        ProgramColumnMap columns;
        columns.dictionary = [&](int) { return dictionary; };
        columns.texts_on_device = on_device;
        std::optional<ColumnProgram> program = compile_filter(*like, columns, nullptr);
        ASSERT_TRUE(program.has_value()) << pattern;
        // (Off the device a pattern that one entry equals is a test of its code.)
        ASSERT_EQ(columns.lookups.size(), on_device || pattern.find('%') != std::string::npos ? 1u : 0u) << pattern;
        for (const LookupColumn& l : columns.lookups) EXPECT_EQ(l.from_text(), on_device);
        place_lookups(*program, columns);
        std::vector<uint8_t> mask(rows, 1);
        EXPECT_EQ(evaluate_program(*program, views, rows, mask.data(), nullptr, nullptr, columns.lookups), 0u);
        const LikePattern expected(pattern, false);
        size_t kept = 0;
        for (size_t r = 0; r < rows; ++r) {
          const bool answer = valid[r] && expected.matches(dictionary->at(codes[r])) != (op == "!~~");
          ASSERT_EQ(mask[r] != 0, answer) << op << " '" << pattern << "' row " << r << " on device " << on_device;
          kept += answer;
        }
        // One entry equals a pattern without '%': a few rows have its code.
        EXPECT_GT(kept, pattern.find('%') == std::string::npos && op == "~~" ? 0u : 100u) << op << " " << pattern;
      }
    }
  }
}

}  // namespace
}  // namespace tally::executor
