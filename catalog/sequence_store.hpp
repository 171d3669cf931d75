#pragma once
// Sequences (CREATE SEQUENCE, and the ones serial and identity columns own),
// kept in the catalog database next to the tables. nextval is not
// transactional (as in PostgreSQL): a value handed out is never handed out
// again, whatever happens to the statement that took it. Durability follows
// PostgreSQL's log_cnt: each time nextval passes the value last written, the
// row is written (synchronously) `log_ahead` values further on, so a restart
// after a crash continues past everything handed out, skipping at most that
// many values, and most nextval calls write nothing. Thread-safe.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::catalog {

class Catalog;

struct SequenceDef {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  TypeId type = TypeId::int8;  // seqtypid: int2, int4 or int8
  int64_t start = 1;
  int64_t increment = 1;
  int64_t min = 1;
  int64_t max = INT64_MAX;
  int64_t cache = 1;
  bool cycle = false;
  // OWNED BY: the table (and its column index) whose DROP drops the sequence;
  // 0 = none.
  uint32_t owner_table = 0;
  int owner_column = -1;
};

struct SequenceValue {
  int64_t last_value = 0;
  bool is_called = false;
};

class SequenceStore {
 public:
  // Creates its table in the catalog database when absent and loads every sequence.
  explicit SequenceStore(Catalog& catalog);

  std::optional<SequenceDef> find(std::string_view name, std::string_view schema = "public") const;
  std::optional<SequenceDef> find(uint32_t oid) const;
  // Every sequence, ordered by name.
  std::vector<SequenceDef> list() const;
  SequenceValue value(uint32_t oid) const;

  // Creates a sequence (def.oid assigned from the catalog's oids); the
  // caller has checked its name and options.
  SequenceDef create(SequenceDef def);
  void drop(uint32_t oid);
  // The owning column's new index (DROP COLUMN moves the columns after the dropped one).
  void set_owner_column(uint32_t oid, int column);
  // The next value; 2200H at the limit of a sequence without CYCLE.
  int64_t next(uint32_t oid);
  // setval: the next nextval returns value (is_called false) or the one after.
  void set(uint32_t oid, int64_t value, bool is_called);

  static constexpr int64_t log_ahead = 32;  // PostgreSQL's SEQ_LOG_VALS

  // The catalog the sequences and their owning tables live in.
  Catalog& catalog() const { return catalog_; }

 private:
  struct Entry {
    SequenceDef def;
    SequenceValue value;
    int64_t logged = 0;  // the last_value written; values up to it may have been handed out
  };
  void write(const Entry& entry, int64_t last_value, bool is_called);

  Catalog& catalog_;
  mutable std::mutex mutex_;
  std::unordered_map<uint32_t, Entry> entries_;
};

}  // namespace tally::catalog
