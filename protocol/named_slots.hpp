#pragma once
// A session's prepared statements or portals by name, with the unnamed one
// ("") in a slot of its own.
//
// Why: the unnamed statement and portal are the ones nearly every client
// uses and replaces once per round trip (libpq's PQexecPrepared binds the
// unnamed portal, pgbench -M extended and JDBC parse the unnamed statement),
// and Sync drops every portal. In a std::map each of those cost a node
// allocation and free plus key compares per round trip; the slot costs
// neither. Named entries (SQL-level names, cursors) stay in a map.
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/query_handler.hpp"

namespace tally::protocol {

template <class Entry>
class NamedSlots {
 public:
  // The entry of that name, or nullptr.
  Entry* find(const std::string& name) {
    if (name.empty()) return unnamed_ ? &*unnamed_ : nullptr;
    auto it = named_.find(name);
    return it == named_.end() ? nullptr : &it->second;
  }
  bool contains(const std::string& name) { return find(name) != nullptr; }

  // Adds or replaces (the old entry is destroyed first).
  void put(const std::string& name, Entry entry) {
    if (name.empty()) {
      unnamed_.reset();
      unnamed_.emplace(std::move(entry));
    } else {
      named_.erase(name);
      named_.emplace(name, std::move(entry));
    }
  }

  void erase(const std::string& name) {
    if (name.empty()) {
      unnamed_.reset();
    } else {
      named_.erase(name);
    }
  }

  // Removes every named entry; the unnamed one stays.
  void clear_named() { named_.clear(); }

  void clear() {
    unnamed_.reset();
    named_.clear();
  }

 private:
  std::optional<Entry> unnamed_;
  std::map<std::string, Entry> named_;
};

// The session's prepared statements, reachable from SQL (PREPARE, EXECUTE,
// DEALLOCATE) through the handler's SessionInfo::prepared.
class PreparedStatementSlots final : public NamedSlots<std::shared_ptr<PreparedStatement>>,
                                     public PreparedStatementRegistry {
 public:
  std::shared_ptr<PreparedStatement> lookup(const std::string& name) override {
    auto* found = find(name);
    return found ? *found : nullptr;
  }
  bool add(const std::string& name, std::shared_ptr<PreparedStatement> statement) override {
    if (contains(name)) return false;
    put(name, std::move(statement));
    return true;
  }
  bool remove(const std::string& name) override {
    if (!contains(name)) return false;
    erase(name);
    return true;
  }
  void remove_all() override { clear_named(); }
};

}  // namespace tally::protocol
