#pragma once
// pg_operator's rows: PostgreSQL 15's prefix and binary operators over Tally's
// types (generated into executor/postgres_operators.inc), of which Tally lists
// those its binder applies to the same operand types with the same result
// type, as function_catalog.hpp does for pg_proc.
#include <cstdint>
#include <vector>

namespace tally::executor {

struct PostgresOperator {
  uint32_t oid;
  const char* name;
  char kind;  // oprkind: 'b' binary, 'l' prefix
  bool canmerge;
  bool canhash;
  uint32_t left;  // 0 for a prefix operator
  uint32_t right;
  uint32_t result;
  uint32_t commutator;
  uint32_t negator;
  uint32_t code;  // oprcode: the function that implements it
  uint32_t restrict_estimator;
  uint32_t join_estimator;
  const char* code_name;    // oprcode as regproc prints it
  const char* description;  // its pg_description comment, or null
};

// The rows Tally supports, in OID order; computed once (thread-safe).
const std::vector<const PostgresOperator*>& supported_operators();
// The supported row with this OID, or whose function (oprcode) has this OID; null when none.
const PostgresOperator* supported_operator(uint32_t oid);
const PostgresOperator* operator_with_code(uint32_t function_oid);

}  // namespace tally::executor
