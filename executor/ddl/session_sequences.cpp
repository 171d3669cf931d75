#include "executor/ddl/session_sequences.hpp"

#include <cctype>

#include "common/error.hpp"

namespace tally::executor {

catalog::SequenceDef SessionSequences::resolve(const std::string& text) const {
  // An oid (a regclass value that reached here as its number).
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 10) {
    if (auto def = store_.find(static_cast<uint32_t>(std::stoul(text)))) return *def;
  }
  std::string schema = "public", name = text;
  auto unquote = [](std::string s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (const auto dot = name.find('.'); dot != std::string::npos && name.front() != '"') {
    schema = unquote(name.substr(0, dot));
    name = name.substr(dot + 1);
  }
  name = unquote(name);
  auto def = store_.find(name, schema);
  if (!def) throw Error(SqlState::undefined_table, "relation \"" + text + "\" does not exist");
  return *def;
}

int64_t SessionSequences::nextval(uint32_t oid) {
  const int64_t v = store_.next(oid);
  std::lock_guard lock(mutex_);
  current_[oid] = v;
  last_ = oid;
  return v;
}

int64_t SessionSequences::nextval(const std::string& name) { return nextval(resolve(name).oid); }

int64_t SessionSequences::currval(const std::string& name) {
  const auto def = resolve(name);
  std::lock_guard lock(mutex_);
  auto it = current_.find(def.oid);
  if (it == current_.end())
    throw Error(SqlState::object_not_in_prerequisite_state,
                "currval of sequence \"" + def.name + "\" is not yet defined in this session");
  return it->second;
}

int64_t SessionSequences::lastval() {
  std::lock_guard lock(mutex_);
  if (!last_) throw Error(SqlState::object_not_in_prerequisite_state, "lastval is not yet defined in this session");
  auto def = store_.find(*last_);
  if (!def) throw Error(SqlState::object_not_in_prerequisite_state, "lastval is not yet defined in this session");
  return current_.at(*last_);
}

int64_t SessionSequences::setval(const std::string& name, int64_t value, bool is_called) {
  const auto def = resolve(name);
  if (value < def.min || value > def.max)
    throw Error(SqlState::numeric_value_out_of_range,
                "setval: value " + std::to_string(value) + " is out of bounds for sequence \"" + def.name + "\" (" +
                    std::to_string(def.min) + ".." + std::to_string(def.max) + ")");
  store_.set(def.oid, value, is_called);
  if (is_called) {
    // PostgreSQL sets currval (not lastval) only when is_called.
    std::lock_guard lock(mutex_);
    current_[def.oid] = value;
  }
  return value;
}

}  // namespace tally::executor
