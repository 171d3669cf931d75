#include "executor/introspection/proc_relation.hpp"

#include <string>

#include "executor/function_catalog.hpp"

namespace tally::executor::introspection {

Relation pg_proc_relation() {
  // PostgreSQL 15's columns. "char"[] and aclitem[] columns are text[] here,
  // in the same text form; pg_node_tree columns are text.
  Relation r;
  const std::pair<const char*, TypeId> columns[] = {
      {"oid", TypeId::oid},           {"proname", TypeId::name},           {"pronamespace", TypeId::oid},
      {"proowner", TypeId::oid},      {"prolang", TypeId::oid},            {"procost", TypeId::float4},
      {"prorows", TypeId::float4},    {"provariadic", TypeId::oid},        {"prosupport", TypeId::regproc},
      {"prokind", TypeId::char_},     {"prosecdef", TypeId::boolean},      {"proleakproof", TypeId::boolean},
      {"proisstrict", TypeId::boolean}, {"proretset", TypeId::boolean},    {"provolatile", TypeId::char_},
      {"proparallel", TypeId::char_}, {"pronargs", TypeId::int2},          {"pronargdefaults", TypeId::int2},
      {"prorettype", TypeId::oid},    {"proargtypes", TypeId::oidvector},  {"proallargtypes", TypeId::oid_array},
      {"proargmodes", TypeId::text_array}, {"proargnames", TypeId::text_array}, {"proargdefaults", TypeId::text},
      {"protrftypes", TypeId::oid_array}, {"prosrc", TypeId::text},        {"probin", TypeId::text},
      {"prosqlbody", TypeId::text},   {"proconfig", TypeId::text_array},   {"proacl", TypeId::text_array}};
  for (const auto& [name, id] : columns) r.columns.push_back({name, SqlType{id}});
  const Value null = Null{};
  auto text = [](const char* s) { return s == nullptr ? Value{Null{}} : Value{std::string(s)}; };
  auto flag = [](char c) { return Value{std::string(1, c)}; };
  for (const PostgresFunction* f : supported_functions()) {
    // Defaults are PostgreSQL's expression trees (pg_node_tree), which Tally
    // has no form of: proargdefaults is NULL, pg_get_function_arguments
    // still prints them.
    r.rows.push_back({int64_t{f->oid}, std::string(f->name), kPgCatalogOid, kBootstrapUserOid, int64_t{f->language},
                      double{f->cost}, double{f->rows}, int64_t{f->variadic}, int64_t{f->support}, flag(f->kind), false,
                      f->leakproof, f->strict, f->retset, flag(f->volatility), flag(f->parallel), int64_t{f->nargs},
                      int64_t{f->nargdefaults}, int64_t{f->rettype}, std::string(f->argtypes), text(f->all_argtypes),
                      text(f->argmodes), text(f->argnames), null, null, text(f->source), null, null, null, null});
  }
  return r;
}

}  // namespace tally::executor::introspection
