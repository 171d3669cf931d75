// TPC-H data generator written from the specification (clause 4.2), not from
// dbgen: the eight tables at a scale factor, as '|'-separated files
// <table>.tbl (no trailing separator, so `COPY t FROM STDIN (DELIMITER '|')`
// loads them as they are).
//
//   tpch_datagen --sf 1 --dir /tmp/tpch-sf1 [--seed N]
//
// What follows the specification: row counts per SF, key ranges (sparse
// order keys, two customers in three with orders, the partsupp supplier
// formula), every value distribution and fixed list, the date rules
// (order date, ship/commit/receipt offsets, return flag and line status
// against CURRENTDATE), prices (p_retailprice formula, l_extendedprice =
// l_quantity * p_retailprice, o_totalprice from its lines, o_orderstatus from
// its lines' statuses), and the comments' grammar (clause 4.2.2.14: sentences
// of noun, verb and prepositional phrases over the specification's word
// lists) with their lengths, plus the Customer...Complaints/Recommends
// suppliers. The text pool is smaller than the specification's 300 MB: the
// queries only match words in it, which any pool of sentences holds. The
// random streams are our own, so the values differ from dbgen's, not their
// distributions: one stream per block of 50,000 keys of a table, so that the
// blocks are made on all cores and the files are the same for any number of them.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <array>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/random.hpp"

namespace {

using tally::bench::Random;

// Clause 4.2.2.13 and 4.2.3: the fixed lists.
const char* const kColors[] = {
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue", "blush",
    "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral", "cornflower", "cornsilk",
    "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick", "floral", "forest", "frosted",
    "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace",
    "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium", "metallic", "midnight",
    "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid", "pale", "papaya", "peach",
    "peru", "pink", "plum", "powder", "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon",
    "sandy", "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan", "thistle",
    "tomato", "turquoise", "violet", "wheat", "white", "yellow"};
static_assert(std::size(kColors) == 92);
const char* const kTypeSize[] = {"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
const char* const kTypeFinish[] = {"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
const char* const kTypeMetal[] = {"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
const char* const kContainerSize[] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
const char* const kContainerKind[] = {"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"};
const char* const kSegments[] = {"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"};
const char* const kPriorities[] = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};
const char* const kInstructions[] = {"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
const char* const kModes[] = {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};
const char* const kRegions[] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
struct Nation {
  const char* name;
  int region;
};
const Nation kNations[] = {
    {"ALGERIA", 0},   {"ARGENTINA", 1}, {"BRAZIL", 1},       {"CANADA", 1},        {"EGYPT", 4},
    {"ETHIOPIA", 0},  {"FRANCE", 3},    {"GERMANY", 3},      {"INDIA", 2},         {"INDONESIA", 2},
    {"IRAN", 4},      {"IRAQ", 4},      {"JAPAN", 2},        {"JORDAN", 4},        {"KENYA", 0},
    {"MOROCCO", 0},   {"MOZAMBIQUE", 0}, {"PERU", 1},        {"CHINA", 2},         {"ROMANIA", 3},
    {"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3},      {"UNITED KINGDOM", 3}, {"UNITED STATES", 1}};

// Clause 4.2.2.14: the grammar's word lists.
const char* const kNouns[] = {
    "foxes", "ideas", "theodolites", "pinto beans", "instructions", "dependencies", "excuses", "platelets",
    "asymptotes", "courts", "dolphins", "multipliers", "sauternes", "warthogs", "frets", "dinos", "attainments",
    "somas", "Tiresias", "patterns", "forges", "braids", "hockey players", "frays", "warhorses", "dugouts",
    "notornis", "epitaphs", "pearls", "tithes", "waters", "orbits", "gifts", "sheaves", "depths", "sentiments",
    "decoys", "realms", "pains", "grouches", "escapades", "packages", "requests", "accounts", "deposits"};
const char* const kVerbs[] = {
    "sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect", "integrate",
    "maintain", "nod", "was", "lose", "sublate", "solve", "thrash", "promise", "engage", "hinder", "print",
    "x-ray", "breach", "eat", "grow", "impress", "mold", "poach", "serve", "run", "dazzle", "snooze", "doze",
    "unwind", "kindle", "play", "hang", "believe", "doubt"};
const char* const kAdjectives[] = {
    "special", "pending", "unusual", "express", "furious", "sly", "careful", "blithe", "quick", "fluffy",
    "slow", "quiet", "ruthless", "thin", "close", "dogged", "daring", "brave", "stealthy", "permanent",
    "enticing", "idle", "busy", "regular", "final", "ironic", "even", "bold", "silent"};
const char* const kAdverbs[] = {
    "sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely", "quickly", "fluffily",
    "slowly", "quietly", "ruthlessly", "thinly", "closely", "doggedly", "daringly", "bravely", "stealthily",
    "permanently", "enticingly", "idly", "busily", "regularly", "finally", "ironically", "evenly", "boldly",
    "silently"};
const char* const kPrepositions[] = {
    "about", "above", "according to", "across", "after", "against", "along", "alongside of", "among", "around",
    "at", "atop", "before", "behind", "beneath", "beside", "besides", "between", "beyond", "by", "despite",
    "during", "except", "for", "from", "in place of", "inside", "instead of", "into", "near", "of", "on",
    "outside", "over", "past", "since", "through", "throughout", "to", "toward", "under", "until", "up", "upon",
    "without", "with", "within"};
const char* const kAuxiliaries[] = {
    "do", "may", "might", "shall", "will", "would", "can", "could", "should", "ought to", "must",
    "will have to", "shall have to", "could have to", "should have to", "must have to", "need to", "try to"};
const char* const kTerminators[] = {".", ";", ":", "?", "!", "--"};

class TextPool {
 public:
  TextPool(Random& r, size_t bytes) {
    while (text_.size() < bytes) sentence(r);
  }
  // Text of a uniform length in [lo, hi] from a random offset of the pool.
  std::string_view take(Random& r, int lo, int hi) const {
    const size_t length = static_cast<size_t>(r.uniform(lo, hi));
    const size_t offset = static_cast<size_t>(r.uniform(0, static_cast<int64_t>(text_.size() - length)));
    return std::string_view(text_).substr(offset, length);
  }

 private:
  void word(const char* w) {
    if (!text_.empty() && text_.back() != ' ') text_ += ' ';
    text_ += w;
  }
  void noun_phrase(Random& r) {
    switch (r.uniform(0, 3)) {
      case 0: break;
      case 1: word(r.pick(kAdjectives)); break;
      case 2: word(r.pick(kAdjectives)); text_ += ','; word(r.pick(kAdjectives)); break;
      default: word(r.pick(kAdverbs)); word(r.pick(kAdjectives)); break;
    }
    word(r.pick(kNouns));
  }
  void verb_phrase(Random& r) {
    const int64_t form = r.uniform(0, 3);
    if (form == 1 || form == 3) word(r.pick(kAuxiliaries));
    word(r.pick(kVerbs));
    if (form >= 2) word(r.pick(kAdverbs));
  }
  void prepositional_phrase(Random& r) {
    word(r.pick(kPrepositions));
    word("the");
    noun_phrase(r);
  }
  void sentence(Random& r) {
    noun_phrase(r);
    switch (r.uniform(0, 4)) {
      case 0: verb_phrase(r); break;
      case 1: verb_phrase(r); prepositional_phrase(r); break;
      case 2: verb_phrase(r); noun_phrase(r); break;
      case 3: prepositional_phrase(r); verb_phrase(r); noun_phrase(r); break;
      default: prepositional_phrase(r); verb_phrase(r); prepositional_phrase(r); break;
    }
    text_ += r.pick(kTerminators);
    text_ += ' ';
  }
  std::string text_;
};

// Days since 1970-01-01 from a civil date and back (Howard Hinnant's algorithms).
int days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int>(doe) - 719468;
}
std::string civil_text(int z) {
  z += 719468;
  const int era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int y = static_cast<int>(yoe) + era * 400 + (m <= 2);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", y, m, d);
  return buf;
}

const int kStartDate = days_from_civil(1992, 1, 1);
const int kCurrentDate = days_from_civil(1995, 6, 17);
const int kEndDate = days_from_civil(1998, 12, 31);

// Rows of one table as text, built in memory: a block's rows, written to
// the table's file in block order.
class Rows {
 public:
  Rows& field(std::string_view v) {
    if (!first_) text_ += '|';
    first_ = false;
    text_ += v;
    return *this;
  }
  Rows& field(int64_t v) {
    char buf[24];
    return field(std::string_view(buf, static_cast<size_t>(std::snprintf(buf, sizeof buf, "%" PRId64, v))));
  }
  // A decimal(15,2) from its value in cents.
  Rows& money(int64_t cents) {
    char buf[32];
    const uint64_t a = static_cast<uint64_t>(cents < 0 ? -cents : cents);
    const int n = std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%02" PRIu64, cents < 0 ? "-" : "", a / 100, a % 100);
    return field(std::string_view(buf, static_cast<size_t>(n)));
  }
  void end() {
    text_ += '\n';
    first_ = true;
  }
  const std::string& text() const { return text_; }
  void clear() { text_.clear(); }

 private:
  std::string text_;
  bool first_ = true;
};

// One output file.
class Table {
 public:
  Table(const std::string& dir, const char* name) : file_(std::fopen((dir + "/" + name + ".tbl").c_str(), "wb")) {
    if (file_ == nullptr) throw std::runtime_error(std::string("cannot write ") + name + ".tbl in " + dir);
  }
  ~Table() { std::fclose(file_); }
  void write(const Rows& rows) {
    if (std::fwrite(rows.text().data(), 1, rows.text().size(), file_) != rows.text().size()) {
      throw std::runtime_error("write failed (disk full?)");
    }
  }

 private:
  FILE* file_;
};

// Rows [1, count] of one or two tables in blocks of `block` keys, each block
// from its own random stream (seeded by seed, stream and block number), made
// on all cores and written in block order: the files are the same whatever
// the number of threads. make(first, last, random, out) fills out[0..files).
template <size_t Files, typename Make>
void generate_blocks(std::array<Table*, Files> tables, int64_t count, int64_t block, uint64_t seed, uint64_t stream,
                     const Make& make) {
  const int64_t blocks = (count + block - 1) / block;
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(blocks, std::thread::hardware_concurrency()));
  std::vector<std::array<Rows, Files>> out(static_cast<size_t>(threads));
  for (int64_t wave = 0; wave < blocks; wave += threads) {
    std::vector<std::thread> workers;
    for (int64_t t = 0; t < threads && wave + t < blocks; ++t) {
      workers.emplace_back([&, t] {
        const int64_t b = wave + t;
        // Through a stream's output, not seed + b: splitmix64 states that
        // differ by a multiple of its increment are the same sequence shifted.
        Random r(Random((seed * 16 + stream) * 0x100000001B3ULL + static_cast<uint64_t>(b)).next());
        for (Rows& rows : out[static_cast<size_t>(t)]) rows.clear();
        make(b * block + 1, std::min(count, (b + 1) * block), r, out[static_cast<size_t>(t)]);
      });
    }
    for (auto& w : workers) w.join();
    for (size_t t = 0; t < workers.size(); ++t) {
      for (size_t f = 0; f < Files; ++f) tables[f]->write(out[t][f]);
    }
  }
}

std::string numbered(const char* prefix, int64_t key) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%09" PRId64, prefix, key);
  return buf;
}
// Clause 4.2.2.9: country code (nation key + 10) and three random groups.
std::string phone(Random& r, int64_t nation) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02" PRId64 "-%03" PRId64 "-%03" PRId64 "-%04" PRId64, nation + 10,
                r.uniform(100, 999), r.uniform(100, 999), r.uniform(1000, 9999));
  return buf;
}
// Clause 4.2.2.7: random alphanumeric string of a random length.
std::string vstring(Random& r, int lo, int hi) {
  static const char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ, ";
  std::string s(static_cast<size_t>(r.uniform(lo, hi)), ' ');
  for (char& c : s) c = kAlphabet[r.next() % 64];
  return s;
}

int64_t retail_cents(int64_t partkey) { return 90000 + ((partkey / 10) % 20001) + 100 * (partkey % 1000); }
// Clause 4.2.3: the i-th (0..3) supplier of a part.
int64_t part_supplier(int64_t partkey, int64_t i, int64_t suppliers) {
  return (partkey + (i * ((suppliers / 4) + (partkey - 1) / suppliers))) % suppliers + 1;
}

// Keys per block of generate_blocks: large enough that a block's work dwarfs
// starting a thread, small enough that a block's text per core stays tens of MB.
constexpr int64_t kBlock = 50000;

struct Scale {
  int64_t suppliers, parts, customers, orders;
};

void region_nation(const std::string& dir, const TextPool& pool, uint64_t seed) {
  Random r(seed * 16 + 1);
  Rows region, nation;
  for (int64_t k = 0; k < 5; ++k) region.field(k).field(kRegions[k]).field(pool.take(r, 31, 115)).end();
  for (int64_t k = 0; k < 25; ++k) {
    nation.field(k).field(kNations[k].name).field(kNations[k].region).field(pool.take(r, 31, 114)).end();
  }
  Table(dir, "region").write(region);
  Table(dir, "nation").write(nation);
}

void part_partsupp(const std::string& dir, const Scale& s, const TextPool& pool, uint64_t seed) {
  Table part_file(dir, "part"), partsupp_file(dir, "partsupp");
  generate_blocks<2>({&part_file, &partsupp_file}, s.parts, kBlock, seed, 2,
                     [&](int64_t first, int64_t last, Random& r, std::array<Rows, 2>& out) {
  Rows& part = out[0];
  Rows& partsupp = out[1];
  std::string name, type, container;
  for (int64_t key = first; key <= last; ++key) {
    size_t chosen[5];
    name.clear();
    for (int w = 0; w < 5; ++w) {
      size_t c;
      do c = r.next() % std::size(kColors);
      while (std::find(chosen, chosen + w, c) != chosen + w);
      chosen[w] = c;
      if (w > 0) name += ' ';
      name += kColors[c];
    }
    const int64_t m = r.uniform(1, 5);
    type = std::string(r.pick(kTypeSize)) + " " + r.pick(kTypeFinish) + " " + r.pick(kTypeMetal);
    const int64_t size = r.uniform(1, 50);
    container = std::string(r.pick(kContainerSize)) + " " + r.pick(kContainerKind);
    part.field(key).field(name).field("Manufacturer#" + std::to_string(m));
    part.field("Brand#" + std::to_string(m) + std::to_string(r.uniform(1, 5))).field(type).field(size);
    part.field(container).money(retail_cents(key)).field(pool.take(r, 5, 22)).end();
    for (int64_t i = 0; i < 4; ++i) {
      partsupp.field(key).field(part_supplier(key, i, s.suppliers)).field(r.uniform(1, 9999));
      partsupp.money(r.uniform(100, 100000)).field(pool.take(r, 49, 198)).end();
    }
  }
  });
}

void supplier(const std::string& dir, const Scale& s, const TextPool& pool, double sf, uint64_t seed) {
  Random r(seed * 16 + 3);
  // SF*5 suppliers get "Customer...Complaints" in their comment, SF*5 others
  // "Customer...Recommends" (clause 4.2.3).
  std::vector<int64_t> order(static_cast<size_t>(s.suppliers));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i) + 1;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[r.next() % i]);
  const size_t marked = std::min(order.size() / 2, static_cast<size_t>(sf * 5 + 0.5));
  std::vector<char> mark(order.size() + 1, 0);
  for (size_t i = 0; i < 2 * marked; ++i) mark[static_cast<size_t>(order[i])] = i < marked ? 'C' : 'R';
  Rows t;
  for (int64_t key = 1; key <= s.suppliers; ++key) {
    const int64_t nation = r.uniform(0, 24);
    const std::string address = vstring(r, 10, 40), ph = phone(r, nation);
    const int64_t balance = r.uniform(-99999, 999999);
    std::string comment(pool.take(r, 25, 100));
    if (const char m = mark[static_cast<size_t>(key)]) {
      const std::string tail = m == 'C' ? "Complaints" : "Recommends";
      const size_t fixed = 8 + tail.size();  // "Customer" + tail
      if (comment.size() < fixed) comment.resize(fixed, ' ');
      const size_t gap = static_cast<size_t>(r.uniform(0, static_cast<int64_t>(comment.size() - fixed)));
      const size_t at = static_cast<size_t>(r.uniform(0, static_cast<int64_t>(comment.size() - fixed - gap)));
      comment.replace(at, 8, "Customer");
      comment.replace(at + 8 + gap, tail.size(), tail);
    }
    t.field(key).field(numbered("Supplier#", key)).field(address).field(nation).field(ph).money(balance);
    t.field(comment).end();
  }
  Table(dir, "supplier").write(t);
}

void customer(const std::string& dir, const Scale& s, const TextPool& pool, uint64_t seed) {
  Table file(dir, "customer");
  generate_blocks<1>({&file}, s.customers, kBlock, seed, 4,
                     [&](int64_t first, int64_t last, Random& r, std::array<Rows, 1>& out) {
    Rows& t = out[0];
    for (int64_t key = first; key <= last; ++key) {
      const int64_t nation = r.uniform(0, 24);
      const std::string address = vstring(r, 10, 40), ph = phone(r, nation);
      t.field(key).field(numbered("Customer#", key)).field(address).field(nation).field(ph);
      t.money(r.uniform(-99999, 999999)).field(r.pick(kSegments)).field(pool.take(r, 29, 116)).end();
    }
  });
}

struct Line {
  int64_t partkey, suppkey, quantity, discount, tax, ship, commit, receipt;
  char returnflag, linestatus;
  const char *instruct, *mode;
  std::string_view comment;
};

void orders_lineitem(const std::string& dir, const Scale& s, const TextPool& pool, uint64_t seed) {
  std::vector<std::string> dates;  // text of every date a row can hold, from kStartDate
  for (int d = kStartDate; d <= kEndDate + 1; ++d) dates.push_back(civil_text(d));
  const auto date = [&](int64_t d) -> const std::string& { return dates[static_cast<size_t>(d - kStartDate)]; };
  Table orders_file(dir, "orders"), lineitem_file(dir, "lineitem");
  const int64_t with_orders = s.customers - s.customers / 3;  // keys not divisible by 3
  generate_blocks<2>({&orders_file, &lineitem_file}, s.orders, kBlock, seed, 5,
                     [&](int64_t first, int64_t last, Random& r, std::array<Rows, 2>& out) {
  Rows& orders = out[0];
  Rows& lineitem = out[1];
  std::vector<Line> lines;
  for (int64_t i = first; i <= last; ++i) {
    const int64_t key = ((i >> 3) << 5) | (i & 7);  // sparse: 8 of every 32 keys
    const int64_t pick = r.uniform(0, with_orders - 1);
    const int64_t custkey = (pick / 2) * 3 + pick % 2 + 1;
    const int64_t orderdate = r.uniform(kStartDate, kEndDate - 151);
    const char* priority = r.pick(kPriorities);
    const int64_t clerk = r.uniform(1, std::max<int64_t>(1, s.suppliers / 10));
    const std::string_view comment = pool.take(r, 19, 78);
    lines.resize(static_cast<size_t>(r.uniform(1, 7)));
    int64_t total = 0;
    size_t shipped = 0;
    for (Line& l : lines) {
      l.partkey = r.uniform(1, s.parts);
      l.suppkey = part_supplier(l.partkey, r.uniform(0, 3), s.suppliers);
      l.quantity = r.uniform(1, 50);
      l.discount = r.uniform(0, 10);
      l.tax = r.uniform(0, 8);
      l.ship = orderdate + r.uniform(1, 121);
      l.commit = orderdate + r.uniform(30, 90);
      l.receipt = l.ship + r.uniform(1, 30);
      l.returnflag = l.receipt <= kCurrentDate ? (r.uniform(0, 1) ? 'R' : 'A') : 'N';
      l.linestatus = l.ship > kCurrentDate ? 'O' : 'F';
      l.instruct = r.pick(kInstructions);
      l.mode = r.pick(kModes);
      l.comment = pool.take(r, 10, 43);
      const int64_t extended = l.quantity * retail_cents(l.partkey);
      total += (extended * (100 - l.discount) * (100 + l.tax) + 5000) / 10000;
      shipped += l.linestatus == 'F';
    }
    const char* status = shipped == lines.size() ? "F" : shipped == 0 ? "O" : "P";
    orders.field(key).field(custkey).field(status).money(total).field(date(orderdate)).field(priority);
    orders.field(numbered("Clerk#", clerk)).field(int64_t{0}).field(comment).end();
    int64_t number = 0;
    for (const Line& l : lines) {
      lineitem.field(key).field(l.partkey).field(l.suppkey).field(++number).field(l.quantity);
      lineitem.money(l.quantity * retail_cents(l.partkey)).money(l.discount).money(l.tax);
      lineitem.field(std::string_view(&l.returnflag, 1)).field(std::string_view(&l.linestatus, 1));
      lineitem.field(date(l.ship)).field(date(l.commit)).field(date(l.receipt)).field(l.instruct).field(l.mode);
      lineitem.field(l.comment).end();
    }
  }
  });
}

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: tpch_datagen --sf SF --dir DIR [--seed N]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  double sf = 0;
  std::string dir;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage();
    if (a == "--sf") sf = std::atof(argv[++i]);
    else if (a == "--dir") dir = argv[++i];
    else if (a == "--seed") seed = std::strtoull(argv[++i], nullptr, 10);
    else usage();
  }
  if (sf <= 0 || dir.empty()) usage();
  std::filesystem::create_directories(dir);
  // Clause 4.2.5: cardinalities scale linearly; the clerk range is SF*1000,
  // which is suppliers / 10.
  const Scale s{static_cast<int64_t>(sf * 10000), static_cast<int64_t>(sf * 200000),
                static_cast<int64_t>(sf * 150000), static_cast<int64_t>(sf * 1500000)};
  Random text_random(seed * 16);
  const TextPool pool(text_random, 16 << 20);
  try {
    region_nation(dir, pool, seed);
    part_partsupp(dir, s, pool, seed);
    supplier(dir, s, pool, sf, seed);
    customer(dir, s, pool, seed);
    orders_lineitem(dir, s, pool, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpch_datagen: %s\n", e.what());
    return 1;
  }
  return 0;
}
