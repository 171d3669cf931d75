#pragma once
// A text column's append-only dictionary on disk: entries [u32 length][bytes]
// in code order. The catalog records the committed entry count, byte length
// and CRC32C (catalog::DictionaryState); bytes past the committed length are
// the tail of an interrupted append and are cut off before the next append.
#include <string>

#include "catalog/table_snapshot.hpp"
#include "common/cancel.hpp"
#include "storage/column_vector.hpp"

namespace tally::storage {

// Loads the committed prefix of a dictionary file. A missing, short or
// checksum-failing file throws Error(XX001) naming `what`; a set `cancel`
// stops the load with its error.
StringDictionary load_dictionary(const std::string& path, const catalog::DictionaryState& state,
                                 const std::string& what, const CancelToken* cancel = nullptr);

// A dictionary file may be one inode under two tables' names: a table made
// from all of another's committed entries links the file (link_dictionary)
// rather than writing the same bytes again. Whoever writes a shared file
// first makes its name its own: keep_private copies the first `keep_bytes`
// bytes into a new file that replaces the name (durably), so that the other
// table's committed prefix is never cut or appended to. Nothing to do for a
// file of one name, or none.
void keep_private(const std::string& path, uint64_t keep_bytes);

// Names `path` (a new table's dictionary, committed state empty) as another
// link of the file `from`; false (nothing changed) where the filesystem
// cannot link it, so the caller writes the entries instead.
bool link_dictionary(const std::string& from, const std::string& path);

// Where keep_private copies before renaming; recover() removes what a crash left.
bool is_private_copy(const std::string& file_name);

// Appends dict's entries [committed.entries, dict.size()) to the file (cutting
// any uncommitted tail first), fsyncs it (unless !sync: the caller fsyncs
// before it commits) and returns the new committed state.
catalog::DictionaryState append_dictionary(const std::string& path, const catalog::DictionaryState& committed,
                                           const StringDictionary& dict, bool sync = true);

}  // namespace tally::storage
