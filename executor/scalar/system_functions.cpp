// System information functions (version, current_database, current_user,
// pg_backend_pid, current_setting, pg_typeof, now) and the SQL value
// functions (CURRENT_USER, CURRENT_DATE, CURRENT_TIMESTAMP, ...).
#include <ctime>
#include <string>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/settings.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

using scalar::kUsecsPerDay;

ExprPtr make_sql_value_function(const std::string& op, BindContext& context) {
  if (op == "SVFOP_CURRENT_USER" || op == "SVFOP_USER" || op == "SVFOP_SESSION_USER" || op == "SVFOP_CURRENT_ROLE") {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.session_user);
  }
  if (op == "SVFOP_CURRENT_CATALOG") return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.database);
  if (op == "SVFOP_CURRENT_SCHEMA") return std::make_unique<ConstExpr>(SqlType{TypeId::name}, std::string("public"));
  const auto now_us = [] {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec - 946684800) * 1'000'000 + ts.tv_nsec / 1000;
  };
  if (op == "SVFOP_CURRENT_DATE") {
    int64_t us = now_us();
    return std::make_unique<ConstExpr>(SqlType{TypeId::date}, us / kUsecsPerDay);
  }
  if (op == "SVFOP_CURRENT_TIMESTAMP" || op == "SVFOP_LOCALTIMESTAMP") {
    return std::make_unique<ConstExpr>(SqlType{op == "SVFOP_LOCALTIMESTAMP" ? TypeId::timestamp : TypeId::timestamptz}, now_us());
  }
  throw Error(SqlState::feature_not_supported, "SQL value function " + op + " is not supported");
}

namespace scalar {

ExprPtr make_system_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto type_of = [&](size_t i) { return args[i]->type; };
  auto unknown_to_text = [&] {
    for (auto& a : args) if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
  };
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
  if (name == "pg_backend_pid" && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::int4}, static_cast<int64_t>(context.backend_pid));
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
  if (name == "pg_typeof" && n == 1) {
    const std::string type = format_type(type_of(0));
    return std::make_unique<ConstExpr>(SqlType{TypeId::regtype}, type);
  }
  return nullptr;
}

}  // namespace scalar

}  // namespace tally::executor
