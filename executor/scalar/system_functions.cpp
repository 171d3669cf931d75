// System information functions (version, current_database, current_user,
// pg_backend_pid, current_setting, pg_typeof, now), server signalling
// functions (pg_sleep, pg_cancel_backend, pg_terminate_backend) and the SQL value
// functions (CURRENT_USER, CURRENT_DATE, CURRENT_TIMESTAMP, ...).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string>
#include <thread>

#include "common/backend_signals.hpp"
#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/notice_scope.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/ddl/session_sequences.hpp"
#include "executor/settings.hpp"
#include "executor/value_codec.hpp"
#include "executor/types/clock.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/timetz.hpp"
#include "executor/types/type_io.hpp"

namespace tally::executor {

using scalar::kUsecsPerDay;

ExprPtr make_sql_value_function(const std::string& op, BindContext& context, int32_t typmod) {
  if (op == "SVFOP_CURRENT_USER" || op == "SVFOP_USER" || op == "SVFOP_SESSION_USER" || op == "SVFOP_CURRENT_ROLE") {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.session_user);
  }
  if (op == "SVFOP_CURRENT_CATALOG") return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.database);
  if (op == "SVFOP_CURRENT_SCHEMA") return std::make_unique<ConstExpr>(SqlType{TypeId::name}, std::string("public"));
  // The transaction's start, as PostgreSQL's now(): one value however many
  // times the statement or its transaction reads it.
  const auto now_us = [&context] { return context.transaction_time_us != 0 ? context.transaction_time_us : clock_us(); };
  if (op == "SVFOP_CURRENT_DATE") {
    int64_t us = now_us();
    return std::make_unique<ConstExpr>(SqlType{TypeId::date}, us / kUsecsPerDay);
  }
  if (op == "SVFOP_LOCALTIME" || op == "SVFOP_LOCALTIME_N") {
    // The transaction start's time of day in the session's zone (LOCALTIME(p): rounded to time(p)).
    int64_t local = types::current_time_zone().to_local(now_us()) % kUsecsPerDay;
    if (local < 0) local += kUsecsPerDay;
    const int32_t precision = op == "SVFOP_LOCALTIME_N" ? types::time_typmod({typmod}) : -1;
    return std::make_unique<ConstExpr>(SqlType{TypeId::time, precision}, types::round_time(local, precision));
  }
  if (op == "SVFOP_CURRENT_TIME" || op == "SVFOP_CURRENT_TIME_N") {
    // The transaction start's time of day in the session's zone, with the
    // zone's offset then (CURRENT_TIME(p): rounded to time(p) with time zone).
    const int32_t precision = op == "SVFOP_CURRENT_TIME_N" ? types::time_typmod({typmod}) : -1;
    return std::make_unique<ConstExpr>(SqlType{TypeId::timetz, precision},
                                       types::round_timetz(types::timestamptz_to_timetz(now_us()), precision));
  }
  if (op == "SVFOP_CURRENT_TIMESTAMP" || op == "SVFOP_LOCALTIMESTAMP") {
    return std::make_unique<ConstExpr>(SqlType{op == "SVFOP_LOCALTIMESTAMP" ? TypeId::timestamp : TypeId::timestamptz}, now_us());
  }
  throw Error(SqlState::feature_not_supported, "SQL value function " + op + " is not supported");
}

namespace scalar {

namespace {

// pg_sleep(seconds): sleeps in slices short enough that a cancel or
// statement_timeout (both set the statement's token) ends it within one.
ExprPtr make_pg_sleep(std::vector<ExprPtr>& args, BindContext& context) {
  args[0] = to_type(std::move(args[0]), TypeId::float8, context);
  return call({TypeId::void_}, "pg_sleep", std::move(args), [](std::span<const Value> a) -> Value {
    if (is_null(a[0])) return Null{};
    const double seconds = std::get<double>(a[0]);
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(std::isfinite(seconds) ? seconds : 0.0));
    constexpr auto kSlice = std::chrono::milliseconds(10);
    for (;;) {
      check_cancel_point();
      const auto now = std::chrono::steady_clock::now();
      if (now >= end) break;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kSlice, end - now));
    }
    return std::string();  // void_out prints the empty string
  });
}

// pg_cancel_backend(pid) / pg_terminate_backend(pid [, timeout]) with
// PostgreSQL's answers: true when signalled, false and a WARNING for a pid
// that is no session, 42501 when the caller may not signal it.
ExprPtr make_signal_backend(bool terminate, std::vector<ExprPtr>& args, BindContext& context) {
  args[0] = to_type(std::move(args[0]), TypeId::int4, context);
  if (args.size() == 2) args[1] = to_type(std::move(args[1]), TypeId::int8, context);
  const int32_t caller = context.backend_pid;
  return call({TypeId::boolean}, terminate ? "pg_terminate_backend" : "pg_cancel_backend", std::move(args),
              [terminate, caller](std::span<const Value> a) -> Value {
    if (is_null(a[0])) return Null{};
    if (a.size() == 2 && !is_null(a[1]) && std::get<int64_t>(a[1]) < 0)
      throw Error(SqlState::numeric_value_out_of_range, "\"timeout\" must not be negative");
    const auto pid = static_cast<int32_t>(std::get<int64_t>(a[0]));
    BackendSignaller* signaller = backend_signaller();
    const SignalOutcome outcome =
        signaller == nullptr ? SignalOutcome::no_such_backend
                             : signaller->signal(caller, pid, terminate ? CancelReason::shutdown : CancelReason::user_request);
    switch (outcome) {
      case SignalOutcome::sent:
        return true;
      case SignalOutcome::no_such_backend:
        raise_notice(Error(SqlState::warning, "PID " + std::to_string(pid) + " is not a PostgreSQL backend process",
                   Severity::warning));
        return false;
      case SignalOutcome::superuser_only:
        throw Error(SqlState::insufficient_privilege,
                    terminate ? "must be a superuser to terminate superuser process"
                              : "must be a superuser to cancel superuser query");
      case SignalOutcome::not_permitted:
        break;
    }
    throw Error(SqlState::insufficient_privilege,
                terminate ? "must be a member of the role whose process is being terminated or member of pg_signal_backend"
                          : "must be a member of the role whose query is being canceled or member of pg_signal_backend");
  });
}

// set_config(name, value, is_local): SET as a function (pg_dump's first
// statement sets search_path with it), answering the value as SHOW shows it.
// is_local (SET LOCAL) and the settings a client is told about with
// ParameterStatus are not taken here: a function has no way to send that
// message, and a silently unreported change would leave the client wrong.
ExprPtr make_set_config(std::vector<ExprPtr>& args, BindContext& context) {
  for (size_t i = 0; i < 2; ++i) args[i] = to_type(std::move(args[i]), TypeId::text, context);
  args[2] = to_type(std::move(args[2]), TypeId::boolean, context);
  // The binder sees the settings read-only; set_config is the one function
  // that writes them, and they are the session's own (non-const) settings.
  Settings* settings = const_cast<Settings*>(context.settings);
  return call({TypeId::text}, "set_config", std::move(args), [settings](std::span<const Value> a) -> Value {
    if (is_null(a[0])) throw Error(SqlState::null_value_not_allowed, "SET requires parameter name");
    if (settings == nullptr) throw Error(SqlState::feature_not_supported, "set_config needs a session");
    const std::string setting = std::get<std::string>(a[0]);
    if (!is_null(a[2]) && std::get<bool>(a[2])) {
      throw Error(SqlState::feature_not_supported, "set_config with is_local = true is not supported")
          .with_hint("Use SET LOCAL.");
    }
    const auto saved = settings->snapshot();
    // A NULL value resets the setting, as PostgreSQL's set_config does.
    const auto changed = is_null(a[1]) ? settings->reset(setting) : settings->set(setting, std::get<std::string>(a[1]));
    if (changed.second) {
      settings->restore(saved);
      throw Error(SqlState::feature_not_supported,
                  "set_config of \"" + changed.first + "\" is not supported")
          .with_hint("Use SET " + changed.first + ".");
    }
    return settings->get(changed.first).value_or("");
  }, false);
}

// nextval, currval, setval and lastval (executor/session_sequences.hpp).
// Their argument is regclass in PostgreSQL; a literal, text or regclass is
// taken as the sequence's name.
ExprPtr make_sequence_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  // The session's sequences are needed by a call, not by binding one (pg_proc's
  // rows are checked by binding without a session: function_catalog.cpp).
  SessionSequences* const session = context.sequences;
  auto sequences_of = [session, name]() -> SessionSequences& {
    if (session == nullptr) throw Error(SqlState::feature_not_supported, name + " needs the storage layer, which this build lacks");
    return *session;
  };
  for (auto& a : args)
    if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
  auto text_of = [](const Value& v) { return std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v)) : std::get<std::string>(v); };
  if (name == "lastval")
    return call({TypeId::int8}, name, std::move(args), [sequences_of](std::span<const Value>) -> Value { return sequences_of().lastval(); });
  if (name == "nextval" || name == "currval") {
    const bool next = name == "nextval";
    return call({TypeId::int8}, name, std::move(args), [sequences_of, next, text_of](std::span<const Value> a) -> Value {
      if (is_null(a[0])) return Null{};
      const std::string seq = text_of(a[0]);
      return next ? sequences_of().nextval(seq) : sequences_of().currval(seq);
    });
  }
  args[1] = to_type(std::move(args[1]), TypeId::int8, context);
  if (args.size() == 3) args[2] = to_type(std::move(args[2]), TypeId::boolean, context);
  return call({TypeId::int8}, name, std::move(args), [sequences_of, text_of](std::span<const Value> a) -> Value {
    for (const auto& v : a)
      if (is_null(v)) return Null{};
    const bool is_called = a.size() < 3 || std::get<bool>(a[2]);
    return sequences_of().setval(text_of(a[0]), std::get<int64_t>(a[1]), is_called);
  });
}

}  // namespace

ExprPtr make_system_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto type_of = [&](size_t i) { return args[i]->type; };
  auto unknown_to_text = [&] {
    for (auto& a : args) if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
  };
  if ((name == "num_nulls" || name == "num_nonnulls") && n >= 1) {
    unknown_to_text();
    const bool nulls = name == "num_nulls";
    return call({TypeId::int4}, name, std::move(args), [nulls](std::span<const Value> a) -> Value {
      int64_t count = 0;
      for (const Value& v : a) count += is_null(v) == nulls ? 1 : 0;
      return count;
    }, false);
  }
  if (name == "version" && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::text}, version_string());
  }
  if ((name == "current_database" || name == "current_catalog") && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.database);
  }
  if (name == "current_schema" && n == 0) return std::make_unique<ConstExpr>(SqlType{TypeId::name}, std::string("public"));
  if ((name == "current_user" || name == "session_user") && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.session_user);
  }
  // No standby mode: a server that answers is the primary.
  if (name == "pg_is_in_recovery" && n == 0) return std::make_unique<ConstExpr>(SqlType{TypeId::boolean}, false);
  if (name == "pg_backend_pid" && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::int4}, static_cast<int64_t>(context.backend_pid));
  }
  if (name == "pg_sleep" && n == 1) return make_pg_sleep(args, context);
  if (((name == "nextval" || name == "currval") && n == 1) || (name == "lastval" && n == 0) ||
      (name == "setval" && (n == 2 || n == 3))) {
    return make_sequence_function(name, args, context);
  }
  if ((name == "pg_cancel_backend" && n == 1) || (name == "pg_terminate_backend" && (n == 1 || n == 2))) {
    return make_signal_backend(name == "pg_terminate_backend", args, context);
  }
  if ((name == "now" || name == "transaction_timestamp" || name == "statement_timestamp" || name == "clock_timestamp") && n == 0) {
    return make_sql_value_function("SVFOP_CURRENT_TIMESTAMP", context);
  }
  if (name == "current_setting" && (n == 1 || n == 2)) {
    unknown_to_text();
    if (n == 2) args[1] = to_type(std::move(args[1]), TypeId::boolean, context);
    const Settings* settings = context.settings;
    return call({TypeId::text}, name, std::move(args), [settings](std::span<const Value> a) -> Value {
      const std::string setting = std::get<std::string>(a[0]);
      auto value = settings ? settings->get(setting) : std::nullopt;
      if (!value) {
        if (a.size() == 2 && std::get<bool>(a[1])) return Null{};
        throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + setting + "\"");
      }
      return *value;
    });
  }
  if (name == "set_config" && n == 3) return make_set_config(args, context);
  if (name == "pg_typeof" && n == 1) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::regtype}, static_cast<int64_t>(type_oid(type_of(0).id)));
  }
  return nullptr;
}

}  // namespace scalar

}  // namespace tally::executor
