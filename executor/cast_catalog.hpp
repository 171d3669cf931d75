#pragma once
// pg_cast's rows: PostgreSQL 15's casts between Tally's types (generated into
// executor/postgres_casts.inc), of which Tally lists those its binder applies
// in the cast's context (can_cast, cast.hpp) and, for a cast by function,
// whose function pg_proc lists (function_catalog.hpp), so that psql's \dC
// names it.
#include <cstdint>
#include <vector>

namespace tally::executor {

struct PostgresCast {
  uint32_t oid;
  uint32_t source;    // castsource
  uint32_t target;    // casttarget
  uint32_t function;  // castfunc, 0 for none
  char context;       // castcontext: 'i' implicit, 'a' assignment, 'e' explicit
  char method;        // castmethod: 'f' function, 'b' binary coercible, 'i' input/output
};

// The rows Tally supports, in OID order; computed once (thread-safe).
const std::vector<const PostgresCast*>& supported_casts();

}  // namespace tally::executor
