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

  void clear() {
    unnamed_.reset();
    named_.clear();
  }

 private:
  std::optional<Entry> unnamed_;
  std::map<std::string, Entry> named_;
};

}  // namespace tally::protocol
