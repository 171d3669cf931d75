#pragma once
// The functions, aggregates and window functions Tally answers, as PostgreSQL
// 15's pg_proc rows: pg_proc, \df and pg_get_function_* read them. The
// candidates are PostgreSQL's own rows (postgres_functions.inc, generated
// from a real PostgreSQL 15 by scripts/generate_postgres_functions.py); one is
// listed when Tally's binder takes a call with exactly its argument types
// (a concrete type in place of a polymorphic one) and gives its result type;
// a set-returning one when a select list runs it with them (project_set.hpp).
// So the list cannot drift from what the binder accepts.
#include <cstdint>
#include <vector>

namespace tally::executor {

// One pg_proc row of PostgreSQL 15, with pg_aggregate's kind and direct
// argument count, PostgreSQL's pg_get_function_* texts and its comment.
struct PostgresFunction {
  uint32_t oid;
  const char* name;
  char kind;  // prokind: 'f' function, 'a' aggregate, 'w' window
  bool retset;
  char volatility;
  char parallel;
  bool strict;
  bool leakproof;
  float cost;
  float rows;
  uint32_t variadic;
  int16_t nargs;
  int16_t nargdefaults;
  uint32_t rettype;
  const char* argtypes;  // proargtypes as oidvector text: "25 25"
  uint32_t language;
  const char* source;
  char aggregate_kind;  // pg_aggregate.aggkind: 'n' normal, 'o' ordered-set, 'h' hypothetical; '\0' for others
  int16_t direct_args;  // pg_aggregate.aggnumdirectargs
  const char* result;            // pg_get_function_result
  const char* arguments;         // pg_get_function_arguments
  const char* identity_arguments;  // pg_get_function_identity_arguments
  const char* argnames;          // proargnames as text[] text, or null
  const char* all_argtypes;      // proallargtypes as oid[] text (VARIADIC ones), or null
  const char* argmodes;          // proargmodes as "char"[] text, or null
  const char* description;       // its pg_description comment, or null
  uint32_t support;              // prosupport: its planner support function, 0 for none
  const char* regproc;           // its OID as regproc prints it ("pg_catalog.lower" where the name is overloaded)
  const char* support_name;      // prosupport as regproc prints it, or null
  const char* sqlbody;           // pg_get_function_sqlbody: a LANGUAGE sql function's BEGIN ATOMIC/RETURN body, or null
};

// The rows Tally supports, in OID order; computed once (thread-safe).
const std::vector<const PostgresFunction*>& supported_functions();
// The supported row with this OID; null when none.
const PostgresFunction* supported_function(uint32_t oid);

}  // namespace tally::executor
