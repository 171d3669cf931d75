#include "executor/introspection/stat_activity_relation.hpp"

#include "common/backend_activity.hpp"
#include "executor/types/clock.hpp"

namespace tally::executor::introspection {

namespace {

Value timestamp(int64_t unix_us) {
  return unix_us == 0 ? Value{Null{}} : Value{unix_us - kUnixTo2000 * 1000000};
}

Value text_or_null(const std::string& s) { return s.empty() ? Value{Null{}} : Value{s}; }

}  // namespace

bool is_stat_activity_relation(std::string_view name) { return name == "pg_stat_activity"; }

std::optional<Relation> stat_activity_relation(std::string_view name) {
  if (!is_stat_activity_relation(name)) return std::nullopt;
  Relation r;
  const SqlType text{TypeId::text}, stamp{TypeId::timestamptz};
  r.columns = {{"datid", SqlType{TypeId::oid}},    {"datname", SqlType{TypeId::name}},
               {"pid", SqlType{TypeId::int4}},     {"leader_pid", SqlType{TypeId::int4}},
               {"usesysid", SqlType{TypeId::oid}}, {"usename", SqlType{TypeId::name}},
               {"application_name", text},         {"client_addr", text},
               {"client_hostname", text},          {"client_port", SqlType{TypeId::int4}},
               {"backend_start", stamp},           {"xact_start", stamp},
               {"query_start", stamp},             {"state_change", stamp},
               {"wait_event_type", text},          {"wait_event", text},
               {"state", text},                    {"backend_xid", text},
               {"backend_xmin", text},             {"query_id", SqlType{TypeId::int8}},
               {"query", text},                    {"backend_type", text}};
  for (const BackendActivity& a : backend_activity()) {
    r.rows.push_back({Value{kDatabaseOid}, Value{a.database}, Value{int64_t{a.pid}}, Value{Null{}}, Value{Null{}},
                      Value{a.user}, Value{a.application_name}, text_or_null(a.client_addr), Value{Null{}},
                      // PostgreSQL's -1: a client on a Unix socket.
                      a.client_addr.empty() ? Value{int64_t{-1}} : Value{Null{}}, timestamp(a.backend_start_us),
                      timestamp(a.xact_start_us), timestamp(a.query_start_us), timestamp(a.state_change_us),
                      Value{Null{}}, Value{Null{}}, Value{a.state}, Value{Null{}}, Value{Null{}}, Value{Null{}},
                      Value{a.query}, Value{std::string("client backend")}});
  }
  return r;
}

}  // namespace tally::executor::introspection
