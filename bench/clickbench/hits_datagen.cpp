// A ClickBench-style `hits` table: the 29 columns of ClickBench's hits that
// its 43 queries read (bench/clickbench/schema.sql), as one '|'-separated
// file hits.tbl that `COPY hits FROM ... (FORMAT csv, DELIMITER '|')` loads.
//
//   hits_datagen --rows 2000000 --dir /tmp/hits-2m [--seed N]
//
// ClickBench's real data (100M rows of Yandex.Metrica) is not reachable from
// our machines, so the values are synthetic, shaped as the queries need them
// to be: a month of event times (July 2013); heavy-tailed (log-uniform)
// counters, users, regions, URLs, referers and search phrases, so that
// GROUP BY ... ORDER BY count(*) DESC LIMIT n has real heavy hitters; most
// search phrases, mobile phone models and some referers empty, as in the
// original; one counter (62) with a tenth of the rows, as the dashboard
// queries Q36-Q42 filter on it; URLs and titles that contain "google" in a few
// percent of rows; and the constants the queries name: URLHash
// 2868770270353813622 and RefererHash 3594120000172545465 are the most
// frequent URL's and referer's, UserID 435090932899640449 a user of some
// hundred events (Q19 lists them).
// Text never holds '|', '"' or a newline; an empty text is written "" (an
// unquoted empty CSV field would be NULL, and every hits column is NOT NULL).
// One random stream per block of 65,536 rows: blocks are made on all cores
// and the file is the same for any number of them.
// With --clustered the rows are written in the order of hits' primary key
// (CounterID, EventDate, UserID, EventTime, WatchID), as a table clustered
// on its key holds them: a counter's rows, and a day's within it, are then
// neighbours, which a scan that skips chunks by their min/max can use. The
// rows are the same; the whole file is held in memory to sort it.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/random.hpp"

namespace {

using tally::bench::Random;

// 0..n-1, log-uniform: index k is drawn about 1/(k+1) as often as index 0.
int64_t heavy(Random& r, int64_t n) {
  return std::min<int64_t>(n - 1, static_cast<int64_t>(std::exp(r.unit() * std::log(n + 1.0)) - 1));
}

uint64_t mix(uint64_t x) { return tally::bench::mix64(x + 0x9E3779B97F4A7C15ULL); }

// Non-negative 63-bit values, as ClickBench's ids are.
int64_t id63(uint64_t x) { return static_cast<int64_t>(mix(x) >> 1); }

constexpr int64_t kNamedUserId = 435090932899640449;
constexpr int64_t kNamedUser = 1000;  // heavy(users): about 1/1000 of the top user's events
constexpr int64_t kTopUrlHash = 2868770270353813622;
constexpr int64_t kTopRefererHash = 3594120000172545465;
constexpr int kDashboardCounter = 62;
constexpr size_t kBlockRows = 65536;

const char* const kWords[] = {
    "weather", "news", "video", "music", "football", "recipe", "cheap", "flights", "hotel", "moscow", "photo",
    "download", "free", "online", "game", "car", "buy", "sale", "apartment", "rent", "work", "job", "bank",
    "credit", "phone", "iphone", "android", "laptop", "map", "train", "ticket", "movie", "series", "watch",
    "school", "university", "health", "doctor", "market", "price", "dress", "shoes", "book", "translate",
    "dictionary", "horoscope", "tv", "program", "radio", "sport", "hockey", "tennis", "garden", "repair",
    "kitchen", "furniture", "wedding", "gift", "toys", "children"};
constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);

const char* const kDomains[] = {
    "yandex.ru", "mail.ru", "vk.com", "google.com", "google.ru", "avito.ru", "auto.ru", "odnoklassniki.ru",
    "livejournal.com", "wikipedia.org", "youtube.com", "kinopoisk.ru", "rambler.ru", "lenta.ru", "rbc.ru",
    "gismeteo.ru", "hh.ru", "ozon.ru", "market.yandex.ru", "news.google.com", "irr.ru", "drom.ru", "cian.ru",
    "sports.ru", "kp.ru", "rg.ru", "aif.ru", "championat.com", "pikabu.ru", "habrahabr.ru"};
constexpr size_t kDomainCount = sizeof(kDomains) / sizeof(kDomains[0]);

const char* const kBrands[] = {"iPhone", "iPad", "Galaxy", "Lumia", "Xperia", "Nexus", "Desire", "Optimus"};

// A phrase of two to four words from a number: the same number, the same text.
std::string words(uint64_t k, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    if (i) out.push_back(' ');
    out += kWords[k % kWordCount];
    k = k / kWordCount + mix(k + static_cast<uint64_t>(i)) % 7;
  }
  return out;
}

std::string url(uint64_t index) {
  // Most frequent URLs are short front pages; the tail has paths and queries.
  std::string out = (index % 3 == 0 ? "https://" : "http://");
  if (index % 4 == 1) out += "www.";
  out += kDomains[mix(index) % kDomainCount];
  out += '/';
  if (index > 0) {
    out += words(mix(index * 31 + 7), 1 + static_cast<int>(index % 3));
    std::replace(out.begin(), out.end(), ' ', '/');
    if (index % 5 == 0) out += "?id=" + std::to_string(index);
  }
  return out;
}

struct Column {
  std::string& out;
  bool first = true;
  void sep() {
    if (!first) out.push_back('|');
    first = false;
  }
  void integer(int64_t v) {
    sep();
    out += std::to_string(v);
  }
  void text(const std::string& v) {
    sep();
    if (v.empty()) out += "\"\"";
    else out += v;
  }
  void raw(const char* v) {
    sep();
    out += v;
  }
};

// A row's primary key, and where its line is in its block's text.
struct RowKey {
  int32_t counter = 0, date = 0;
  int64_t user = 0, time = 0, watch = 0;
  uint32_t block = 0, offset = 0, length = 0;
  bool operator<(const RowKey& o) const {
    if (counter != o.counter) return counter < o.counter;
    if (date != o.date) return date < o.date;
    if (user != o.user) return user < o.user;
    if (time != o.time) return time < o.time;
    return watch < o.watch;
  }
};

// Appends one row's line to `out`; with `key`, fills in its primary key.
void append_row(std::string& out, Random& r, uint64_t row, int64_t users, int64_t urls, RowKey* key) {
  // July 2013 (UTC), to the second.
  const int64_t seconds = r.uniform(0, 31 * 86400 - 1);
  const std::time_t t = 1372636800 + seconds;  // 2013-07-01 00:00:00 UTC
  std::tm tm{};
  gmtime_r(&t, &tm);
  char event_time[64], event_date[32];
  std::snprintf(event_time, sizeof event_time, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::snprintf(event_date, sizeof event_date, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);

  const int64_t user = heavy(r, users);
  const int counter = r.chance(0.1) ? kDashboardCounter : static_cast<int>(1 + heavy(r, 100000));
  const int64_t url_index = heavy(r, urls);
  const bool no_url = r.chance(0.01);
  const std::string page = no_url ? "" : url(static_cast<uint64_t>(url_index));
  const bool no_referer = r.chance(0.3);
  const int64_t referer_index = heavy(r, urls);
  const std::string referer = no_referer ? "" : url(static_cast<uint64_t>(referer_index) * 7 + 1);
  const int search_engine = r.chance(0.8) ? 0 : static_cast<int>(r.uniform(1, 30));
  const bool searched = r.chance(0.15);
  const std::string phrase = searched ? words(static_cast<uint64_t>(heavy(r, 500000)), 2 + static_cast<int>(row % 3)) : "";
  const int adv_engine = r.chance(0.97) ? 0 : static_cast<int>(r.uniform(1, 30));
  const int mobile_phone = r.chance(0.9) ? 0 : static_cast<int>(r.uniform(1, 100));
  std::string model;
  if (mobile_phone != 0) model = std::string(kBrands[mobile_phone % 8]) + " " + std::to_string(heavy(r, 40) + 1);
  static const int kWidths[] = {1920, 1366, 1280, 1440, 1600, 1024, 2560, 1680, 1536, 800};
  const int width = kWidths[heavy(r, 10)];
  std::string title;
  if (!r.chance(0.05)) {
    title = words(static_cast<uint64_t>(url_index) * 3 + 1, 3);
    if (r.chance(0.03)) title += " - Google";
    else title[0] = static_cast<char>(title[0] - 'a' + 'A');
  }
  const int64_t url_hash = no_url ? 0 : url_index == 0 ? kTopUrlHash : id63(static_cast<uint64_t>(url_index) + (1ULL << 40));
  const int64_t referer_hash =
      no_referer ? 0 : referer_index == 0 ? kTopRefererHash : id63(static_cast<uint64_t>(referer_index) + (1ULL << 41));

  const int64_t user_id = user == kNamedUser ? kNamedUserId : id63(static_cast<uint64_t>(user));
  if (key != nullptr) {
    *key = RowKey{counter, static_cast<int32_t>(seconds / 86400), user_id, seconds, id63(row + (1ULL << 50))};
  }
  Column c{out};
  c.integer(id63(row + (1ULL << 50)));                                          // WatchID
  c.integer(r.chance(0.7) ? 1 : 0);                                             // JavaEnable
  c.text(title);                                                                // Title
  c.integer(r.chance(0.99) ? 1 : 0);                                            // GoodEvent
  c.raw(event_time);                                                            // EventTime
  c.raw(event_date);                                                            // EventDate
  c.integer(counter);                                                           // CounterID
  c.integer(static_cast<int32_t>(mix(static_cast<uint64_t>(user) * 3 + (row % 4 == 0)) >> 32));  // ClientIP
  c.integer(1 + heavy(r, 10000));                                                // RegionID
  c.integer(user_id);                                                           // UserID
  c.integer(heavy(r, 60));                                                       // OS
  c.integer(heavy(r, 120));                                                      // UserAgent
  c.text(page);                                                                 // URL
  c.text(referer);                                                              // Referer
  c.integer(r.chance(0.1) ? 1 : 0);                                             // IsRefresh
  c.integer(width);                                                             // ResolutionWidth
  c.integer(mobile_phone);                                                      // MobilePhone
  c.text(model);                                                                // MobilePhoneModel
  c.integer(r.uniform(-1, 9));                                                  // TraficSourceID
  c.integer(search_engine);                                                     // SearchEngineID
  c.text(phrase);                                                               // SearchPhrase
  c.integer(adv_engine);                                                        // AdvEngineID
  c.integer(width - r.uniform(0, 400));                                         // WindowClientWidth
  c.integer(r.uniform(400, 1200));                                              // WindowClientHeight
  c.integer(r.chance(0.05) ? 1 : 0);                                            // IsLink
  c.integer(r.chance(0.01) ? 1 : 0);                                            // IsDownload
  c.integer(r.chance(0.02) ? 1 : 0);                                            // DontCountHits
  c.integer(url_hash);                                                          // URLHash
  c.integer(referer_hash);                                                      // RefererHash
  out.push_back('\n');
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: hits_datagen --rows N --dir DIR [--seed N] [--clustered]\n"
               "  writes DIR/hits.tbl ('|'-separated, for COPY hits FROM ... (FORMAT csv, DELIMITER '|'));\n"
               "  --clustered: rows in the primary key's order (held in memory to sort them)\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t rows = 0, seed = 1;
  std::string dir;
  bool clustered = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage();
    if (a == "--clustered") {
      clustered = true;
      continue;
    }
    if (i + 1 >= argc) usage();
    const std::string v = argv[++i];
    if (a == "--rows") rows = static_cast<uint64_t>(std::atof(v.c_str()));
    else if (a == "--dir") dir = v;
    else if (a == "--seed") seed = std::strtoull(v.c_str(), nullptr, 10);
    else usage();
  }
  if (rows == 0 || dir.empty()) usage();
  try {
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/hits.tbl";
    std::FILE* f = std::fopen((path + ".part").c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    // Users and URLs grow with the table, as they would with more traffic.
    const auto users = static_cast<int64_t>(std::max<uint64_t>(1000, rows / 8));
    const auto urls = static_cast<int64_t>(std::max<uint64_t>(1000, rows / 4));
    const uint64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    auto write = [&](const char* data, size_t size) {
      if (std::fwrite(data, 1, size, f) != size) throw std::runtime_error("write failed: " + path);
    };
    // Clustered: every block's text and its rows' keys, kept to the end.
    std::vector<std::string> kept(clustered ? blocks : 0);
    std::vector<RowKey> keys(clustered ? rows : 0);
    // Blocks are made `threads` at a time and written in order.
    for (uint64_t first = 0; first < blocks; first += threads) {
      const uint64_t count = std::min<uint64_t>(threads, blocks - first);
      std::vector<std::string> text(count);
      std::vector<std::thread> workers;
      for (uint64_t b = 0; b < count; ++b) {
        workers.emplace_back([&, b] {
          const uint64_t block = first + b;
          // A mixed seed: Random(s + 1) is Random(s) one draw later, which
          // made every block's rows copies of the block before's, shifted.
          Random r(Random(seed * 1000003 + block).next());
          const uint64_t end = std::min(rows, (block + 1) * kBlockRows);
          for (uint64_t row = block * kBlockRows; row < end; ++row) {
            const size_t offset = text[b].size();
            RowKey* key = clustered ? &keys[row] : nullptr;
            append_row(text[b], r, row, users, urls, key);
            if (key != nullptr) {
              key->block = static_cast<uint32_t>(block);
              key->offset = static_cast<uint32_t>(offset);
              key->length = static_cast<uint32_t>(text[b].size() - offset);
            }
          }
        });
      }
      for (auto& w : workers) w.join();
      for (uint64_t b = 0; b < count; ++b) {
        if (clustered) kept[first + b] = std::move(text[b]);
        else write(text[b].data(), text[b].size());
      }
      std::fprintf(stderr, "\rhits_datagen: %" PRIu64 " of %" PRIu64 " rows", std::min(rows, (first + count) * kBlockRows), rows);
    }
    if (clustered) {
      std::fprintf(stderr, "\nhits_datagen: sorting by the primary key\n");
      std::sort(keys.begin(), keys.end());
      for (const RowKey& k : keys) write(kept[k.block].data() + k.offset, k.length);
    }
    if (std::fclose(f) != 0) throw std::runtime_error("write failed: " + path);
    std::filesystem::rename(path + ".part", path);
    std::fprintf(stderr, "\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hits_datagen: %s\n", e.what());
    return 1;
  }
}
