// StringDictionary: dictionaries of one column share an append-only store;
// copies are O(1), a copy that is not the newest forks before it interns, and
// readers of older dictionaries read while the newest interns. A dictionary
// file's load adopts the file's entries as they are, and stops on a cancel.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "common/cancel.hpp"
#include "storage/dictionary_file.hpp"
#include "storage/string_dictionary.hpp"

using tally::storage::StringDictionary;

namespace {

std::string value(int i) { return "value_" + std::to_string(i); }

TEST(StringDictionaryTest, CodesAreDenseInFirstSeenOrderAcrossIndexGrowth) {
  StringDictionary d;
  constexpr int n = 200000;
  for (int i = 0; i < n; ++i) ASSERT_EQ(d.intern(value(i)), i);
  for (int i = 0; i < n; ++i) ASSERT_EQ(d.intern(value(i)), i);
  EXPECT_EQ(d.size(), n);
  EXPECT_EQ(d.intern(""), n);
  EXPECT_EQ(d.find(""), n);
  EXPECT_EQ(d.at(n), "");
  for (int i = 0; i < n; i += 997) EXPECT_EQ(d.at(i), value(i));
  EXPECT_EQ(d.find("absent"), -1);
  const std::string long_value(3 << 20, 'x');  // longer than an arena block
  const int32_t code = d.intern(long_value);
  EXPECT_EQ(d.at(code), long_value);
}

TEST(StringDictionaryTest, CopiesSeeTheirPrefixAndAStaleCopyForks) {
  StringDictionary committed;
  committed.intern("a");
  committed.intern("b");
  StringDictionary append = committed;  // an append's working copy
  EXPECT_EQ(append.intern("c"), 2);
  EXPECT_EQ(committed.size(), 2);
  EXPECT_EQ(committed.find("c"), -1);  // past its prefix
  EXPECT_EQ(committed.find("b"), 1);
  // The append failed; the next one starts again from the committed copy:
  // "c" must not keep code 2, and "d" takes it.
  StringDictionary next = committed;
  EXPECT_EQ(next.find("c"), -1);
  EXPECT_EQ(next.intern("d"), 2);
  EXPECT_EQ(next.intern("c"), 3);
  EXPECT_EQ(next.at(2), "d");
  EXPECT_EQ(append.at(2), "c");  // the failed append's copy is untouched
  EXPECT_EQ(committed.size(), 2);
}

TEST(StringDictionaryTest, ReadersOfOlderCopiesReadWhileTheNewestInterns) {
  StringDictionary d;
  constexpr int before = 50000, after = 400000;
  for (int i = 0; i < before; ++i) d.intern(value(i));
  const StringDictionary reader = d;
  std::thread writer([&] {
    for (int i = before; i < after; ++i) d.intern(value(i));
  });
  int misses = 0;
  for (int round = 0; round < 4; ++round)
    for (int i = 0; i < before; ++i) {
      misses += reader.find(value(i)) != i;
      misses += reader.at(i) != value(i);
      const int32_t newest = reader.find_newest(value(i + before), StringDictionary::hash(value(i + before)));
      misses += newest >= 0 && newest != i + before;
    }
  writer.join();
  EXPECT_EQ(misses, 0);
  EXPECT_EQ(reader.size(), before);
  EXPECT_EQ(d.size(), after);
  EXPECT_EQ(reader.find(value(after - 1)), -1);
  EXPECT_EQ(d.find(value(after - 1)), after - 1);
}

}  // namespace

namespace {

TEST(StringDictionaryTest, BorrowKeepsCodesAndAddsToAStoreOfItsOwn) {
  StringDictionary source;
  constexpr int n = 5000;
  for (int i = 0; i < n; ++i) source.intern(value(i));
  source.intern("");
  StringDictionary snapshot = source;  // what a query read
  source.intern("added after the snapshot");
  StringDictionary copy = StringDictionary::borrow(snapshot);
  source.intern("added after the borrow");
  ASSERT_EQ(copy.size(), n + 1);
  EXPECT_EQ(copy.find("added after the borrow"), -1);
  EXPECT_EQ(copy.find_newest("added after the borrow", StringDictionary::hash("added after the borrow")), -1);
  for (int i = 0; i < n; ++i) ASSERT_EQ(copy.at(i), value(i));
  EXPECT_EQ(copy.at(n), "");
  for (int i = 0; i < n; i += 7) ASSERT_EQ(copy.find(value(i)), i);  // its index finds every entry
  EXPECT_EQ(copy.find(""), n);
  EXPECT_EQ(copy.find("added after the snapshot"), -1);
  // Interning into the copy extends it alone.
  EXPECT_EQ(copy.intern("new"), n + 1);
  EXPECT_EQ(copy.intern(value(3)), 3);
  EXPECT_EQ(copy.find("added after the borrow"), -1);
  EXPECT_EQ(source.find("new"), -1);
  EXPECT_EQ(source.size(), n + 3);
  EXPECT_EQ(source.intern("newer"), n + 3);  // the source's store never saw the copy's entry
  EXPECT_EQ(copy.find("newer"), -1);
  EXPECT_EQ(StringDictionary::borrow(StringDictionary()).size(), 0);
}

}  // namespace

namespace {

// The batch lookup answers as find_newest does value by value: present
// values, absent ones, the empty string, batches shorter than its pipeline,
// a borrowed dictionary (its own prefix only), and while the newest interns.
TEST(StringDictionaryTest, BatchLookupAnswersAsOneByOne) {
  StringDictionary d;
  constexpr int n = 100000;
  for (int i = 0; i < n; ++i) d.intern(value(i));
  d.intern("");
  auto probes_of = [](const std::vector<std::string>& values) {
    std::vector<StringDictionary::Probe> probes;
    for (const auto& v : values) probes.push_back({v, StringDictionary::hash(v), 12345});
    return probes;
  };
  std::vector<std::string> values;
  for (int i = 0; i < 3 * n; i += 7) values.push_back(value(i));  // two thirds absent
  values.push_back("");
  for (const size_t size : {size_t{0}, size_t{1}, size_t{5}, size_t{23}, values.size()}) {
    const std::vector<std::string> part(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(size));
    auto probes = probes_of(part);
    d.find_newest(std::span(probes));
    for (size_t k = 0; k < size; ++k)
      ASSERT_EQ(probes[k].code, d.find_newest(part[k], probes[k].hash)) << part[k];
  }
  StringDictionary borrowed = StringDictionary::borrow(d);
  d.intern("added after the borrow");
  auto probes = probes_of({"added after the borrow", value(17), "absent"});
  borrowed.find_newest(std::span(probes));
  EXPECT_EQ(probes[0].code, -1);
  EXPECT_EQ(probes[1].code, 17);
  EXPECT_EQ(probes[2].code, -1);
  // Readers batch while the writer interns and grows the index.
  std::thread writer([&] {
    for (int i = n; i < 4 * n; ++i) d.intern(value(i));
  });
  int wrong = 0;
  for (int round = 0; round < 4; ++round) {
    auto batch = probes_of(values);
    d.find_newest(std::span(batch));
    for (size_t k = 0; k < values.size(); ++k) {
      const int32_t code = batch[k].code;
      if (code >= 0) wrong += d.at(code) != values[k];  // a value interned meanwhile may be missed, never misreported
      else wrong += k < values.size() - 1 && static_cast<int>(k) * 7 < n;  // committed before the batch: found
    }
  }
  writer.join();
  EXPECT_EQ(wrong, 0);
}

// Entries "v0", "v1", ... laid out in one buffer, and views of them.
struct Entries {
  std::unique_ptr<char[]> bytes;
  std::vector<std::string_view> views;
};

Entries entries(int n, int duplicate_of = -1) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) values.push_back(i == n - 1 && duplicate_of >= 0 ? value(duplicate_of) : value(i));
  size_t bytes = 0;
  for (const auto& v : values) bytes += v.size();
  Entries e;
  e.bytes = std::make_unique<char[]>(bytes);
  char* at = e.bytes.get();
  for (const auto& v : values) {
    std::memcpy(at, v.data(), v.size());
    e.views.emplace_back(at, v.size());
    at += v.size();
  }
  return e;
}

TEST(StringDictionaryTest, AdoptedEntriesKeepTheirCodesAndInternsGoOn) {
  constexpr int n = 100000;
  Entries e = entries(n);
  StringDictionary d;
  int ticks = 0;
  ASSERT_TRUE(StringDictionary::adopt(std::move(e.bytes), e.views, [&] { ++ticks; }, d));
  EXPECT_GE(ticks, 2);
  EXPECT_EQ(d.size(), n);
  for (int i = 0; i < n; i += 101) {
    EXPECT_EQ(d.at(i), value(i));
    EXPECT_EQ(d.find(value(i)), i);
  }
  EXPECT_EQ(d.find("absent"), -1);
  EXPECT_EQ(d.intern(value(17)), 17);
  EXPECT_EQ(d.intern("new"), n);
  StringDictionary copy = d;
  EXPECT_EQ(copy.intern("newer"), n + 1);
  EXPECT_EQ(d.find("newer"), -1);
}

TEST(StringDictionaryTest, AdoptRejectsEqualEntries) {
  Entries e = entries(1000, 400);
  StringDictionary d;
  EXPECT_FALSE(StringDictionary::adopt(std::move(e.bytes), e.views, {}, d));
  EXPECT_EQ(d.size(), 0);
}

TEST(StringDictionaryTest, AFileLoadsAsWrittenAndStopsOnACancel) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tally_dictionary_load_" + std::to_string(::getpid()))).string();
  std::filesystem::remove(path);
  StringDictionary written;
  constexpr int n = 300000;
  for (int i = 0; i < n; ++i) written.intern(value(i));
  written.intern("");
  const tally::catalog::DictionaryState state = tally::storage::append_dictionary(path, {}, written, true);
  const StringDictionary read = tally::storage::load_dictionary(path, state, "test dictionary");
  ASSERT_EQ(read.size(), n + 1);
  for (int i = 0; i < n; i += 1009) EXPECT_EQ(read.find(value(i)), i);
  EXPECT_EQ(read.find(""), n);
  tally::CancelToken cancel;
  cancel.request(tally::CancelReason::statement_timeout);
  try {
    (void)tally::storage::load_dictionary(path, state, "test dictionary", &cancel);
    ADD_FAILURE() << "the load did not stop";
  } catch (const tally::Error& e) {
    EXPECT_EQ(e.state(), tally::SqlState::query_canceled);
  }
  std::filesystem::remove(path);
}

}  // namespace
