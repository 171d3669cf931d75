#pragma once
// A check that every row an append adds must pass before it is committed:
// the seam through which the executor enforces unique keys on INSERT, COPY,
// INSERT ... SELECT and UPDATE alike, since all of them append through
// TableAppender. Storage calls it with the rows as they sit in the chunk
// buffers (native values, text as codes of the append's dictionaries) and
// knows nothing of what it checks; a check throws tally::Error to refuse a
// row, and the append is then never committed.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "storage/column_vector.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::storage {

class TableStore;

class AppendCheck {
 public:
  virtual ~AppendCheck() = default;
  // Rows [first, first + count) of `columns` (one per table column; text
  // columns hold codes of dictionaries[c]) are about to be appended.
  virtual void check(const std::vector<const ColumnVector*>& columns,
                     const std::vector<const StringDictionary*>& dictionaries, size_t first, size_t count) = 0;
  // The append committed outside a transaction block; `after` is the
  // table's new committed snapshot.
  virtual void committed(const catalog::TableSnapshot& after) { (void)after; }
};

// Makes the check of one append to the table `base` (the snapshot the append
// starts from; `replacing`: the append replaces every chunk of it, UPDATE and
// DELETE, so none of its rows count). Returns nullptr when nothing is to be
// checked.
using AppendCheckFactory = std::function<std::unique_ptr<AppendCheck>(
    TableStore& store, const std::shared_ptr<const catalog::TableSnapshot>& base, bool replacing, bool in_block)>;

}  // namespace tally::storage
