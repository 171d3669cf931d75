#pragma once
// Codes for one text group key whose values come from a join, a subquery or
// an expression rather than one stored column: the key tuple's engine
// groups by int64 codes (AggregationSpec::key_tuple), so every distinct
// string needs one code, whichever thread meets it first.
//
// A scan keeps a text column as its dictionary's codes (Vector::coded), and
// a join or subquery passes those codes on, so the first chunk decides: when
// its values are coded, that dictionary's codes are used as they are (no
// string is looked at), and a string it lacks (another source, a computed
// value) gets a query-local code after its entries. Codes of both kinds map
// to one dictionary in the end (dictionary()), so the result column stays
// coded.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "executor/value.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

class TextKeyCodes {
 public:
  TextKeyCodes();
  // The codes of v's non-NULL rows into out[0, v.count) (NULL rows are left
  // as they are). Safe on several threads at once.
  void code(const Vector& v, int64_t* out);
  // Takes `source`'s codes as they are from the start (an engine's key
  // program computed them: the codes of a stored column or a lookup's
  // column). Before any code().
  void adopt(std::shared_ptr<const storage::StringDictionary> source);
  // The dictionary every code given indexes (null: no value was coded).
  std::shared_ptr<const storage::StringDictionary> dictionary() const;

 private:
  int64_t local_code(std::string_view value);

  std::once_flag decided_;
  std::shared_ptr<const storage::StringDictionary> source_;  // the first chunk's, if it was coded
  int32_t source_size_ = 0;
  std::mutex intern_mutex_;               // one writer of local_ at a time
  storage::StringDictionary local_;      // strings the source lacks, in order of first sight
  std::atomic<bool> local_used_{false};
};

}  // namespace tally::executor
