#pragma once
// pg_depend's rows for Tally's objects: a column default's dependency on its
// column and on the sequence its nextval reads, a sequence's on the column
// that owns it (serial: 'a', identity: 'i'), and a view's rule's on the view
// and on what it reads. pg_dump orders what it writes by them, and writes
// ALTER SEQUENCE ... OWNED BY from them.
#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

Relation pg_depend_relation(const CatalogSource& source);

}  // namespace tally::executor::introspection
