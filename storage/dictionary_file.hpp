#pragma once
// A text column's append-only dictionary on disk: entries [u32 length][bytes]
// in code order. The catalog records the committed entry count, byte length
// and CRC32C (catalog::DictionaryState); bytes past the committed length are
// the tail of an interrupted append and are cut off before the next append.
#include <string>

#include "catalog/table_snapshot.hpp"
#include "storage/column_vector.hpp"

namespace tally::storage {

// Loads the committed prefix of a dictionary file. A missing, short or
// checksum-failing file throws Error(XX001) naming `what`.
StringDictionary load_dictionary(const std::string& path, const catalog::DictionaryState& state,
                                 const std::string& what);

// Appends dict's entries [committed.entries, dict.size()) to the file (cutting
// any uncommitted tail first), fsyncs it (unless !sync: the caller fsyncs
// before it commits) and returns the new committed state.
catalog::DictionaryState append_dictionary(const std::string& path, const catalog::DictionaryState& committed,
                                           const StringDictionary& dict, bool sync = true);

}  // namespace tally::storage
