#pragma once
// One session's use of the sequences: nextval, currval, setval and lastval
// as PostgreSQL defines them (currval and lastval are per session, 55000
// before this session called nextval), over the shared catalog::SequenceStore.
// Sequence names are resolved as regclass input resolves them.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "catalog/sequence_store.hpp"

namespace tally::executor {

class SessionSequences {
 public:
  explicit SessionSequences(catalog::SequenceStore& store) : store_(store) {}

  int64_t nextval(const std::string& name);
  int64_t nextval(uint32_t oid);
  int64_t currval(const std::string& name);
  int64_t lastval();
  int64_t setval(const std::string& name, int64_t value, bool is_called);

  // The sequence a name (as regclass reads it: 'S' folds to s, '"S"' keeps
  // case, public. may prefix it) names; 42P01 when there is none.
  catalog::SequenceDef resolve(const std::string& name) const;
  catalog::SequenceStore& store() { return store_; }

 private:
  catalog::SequenceStore& store_;
  std::mutex mutex_;  // expressions may run on several worker threads
  std::map<uint32_t, int64_t> current_;
  std::optional<uint32_t> last_;
};

}  // namespace tally::executor
