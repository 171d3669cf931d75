#include "executor/session.hpp"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <unordered_set>

#include "common/error.hpp"
#include "common/statement_timeline.hpp"
#include "executor/database.hpp"
#include "executor/parser.hpp"
#include "executor/select_plan.hpp"
#include "executor/plan_constants.hpp"
#include "executor/shared_analyses.hpp"
#include "executor/statement_shape.hpp"
#include "executor/statement_router.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

std::string const_to_string(const json& node) {
  if (node.contains("A_Const")) {
    const auto& c = node["A_Const"];
    if (c.contains("sval")) return c["sval"].value("sval", "");
    if (c.contains("ival")) return std::to_string(c["ival"].value("ival", int64_t{0}));
    if (c.contains("fval")) return c["fval"].value("fval", "");
    if (c.contains("boolval")) return c["boolval"].value("boolval", false) ? "on" : "off";
  }
  if (node.contains("TypeCast")) return const_to_string(node["TypeCast"]["arg"]);
  throw Error(SqlState::feature_not_supported, "this SET value form is not supported");
}

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return true;
  }
  return s[0] >= '0' && s[0] <= '9';
}

// SET's argument list as PostgreSQL renders it (flatten_set_variable_args).
std::string set_value(const std::string& name, const json& args) {
  std::string out;
  bool first = true;
  for (const auto& arg : args) {
    std::string v = const_to_string(arg);
    if (name == "search_path" && arg.contains("A_Const") && arg["A_Const"].contains("sval") && needs_quotes(v)) {
      v = "\"" + v + "\"";
    }
    if (!first) out += ", ";
    out += v;
    first = false;
  }
  return out;
}

ResultSet command(std::string tag) {
  ResultSet r;
  r.tag = std::move(tag);
  r.returns_rows = false;
  return r;
}

ResultSet text_rows(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows) {
  ResultSet r;
  r.tag = "SHOW";
  for (size_t c = 0; c < names.size(); ++c) {
    r.fields.push_back(describe_column(names[c], {TypeId::text}));
    Vector v({TypeId::text});
    for (const auto& row : rows) v.push(row[c]);
    r.columns.push_back(std::move(v));
  }
  r.rows = rows.size();
  return r;
}

// Node types of a statement whose analysis depends on nothing but its text,
// its parameter types and the session's settings (text_only_node); a SELECT
// over a table adds a few (table_plan_node).
const std::unordered_set<std::string_view> kTextOnlyNodes = {
    "SelectStmt", "ResTarget", "A_Const", "ParamRef", "TypeCast", "TypeName", "String", "Integer",
    "Float", "Boolean", "A_Expr", "BoolExpr", "NullTest", "BooleanTest", "CaseExpr", "CaseWhen", "CoalesceExpr"};

// Whether every node type in the tree is in `allowed` (and no TypeName is a
// reg* type, which reads the catalog); FuncCall nodes, when allowed, must be
// a plain call of one of `functions` (no schema, no OVER).
bool only_nodes(const json& node, const std::unordered_set<std::string_view>& allowed,
                const std::unordered_set<std::string_view>& functions) {
  if (node.is_array()) {
    for (const auto& child : node) {
      if (!only_nodes(child, allowed, functions)) return false;
    }
    return true;
  }
  if (!node.is_object()) return true;
  for (const auto& [key, child] : node.items()) {
    if (!key.empty() && key[0] >= 'A' && key[0] <= 'Z') {
      if (!allowed.count(key)) return false;
      if (key == "TypeName") {
        // regclass, regtype, ... read the catalog.
        for (const auto& name : child.value("names", json::array())) {
          const auto& text = name.contains("String") ? name["String"].value("sval", "") : std::string();
          if (text.rfind("reg", 0) == 0) return false;
        }
      }
      if (key == "FuncCall") {
        const auto& names = child.value("funcname", json::array());
        if (names.size() != 1 || !names[0].contains("String") || child.contains("over") ||
            !functions.count(names[0]["String"].value("sval", ""))) {
          return false;
        }
      }
    }
    if (!only_nodes(child, allowed, functions)) return false;
  }
  return true;
}

// Node types whose analysis depends on nothing but the statement text, its
// parameter types and the session's settings: no table, no function (now()
// is folded at analysis), no catalog look-up. libpg_query's JSON names node
// types in CamelCase and fields in lowerCamelCase, so every key that starts
// with an upper-case letter is a node type.
bool text_only_node(const json& node) { return only_nodes(node, kTextOnlyNodes, {}); }

// Node types of a SELECT over a table whose analysis depends only on the
// text, the parameter types, the settings and the table's snapshot: those of
// text_only_node, plus column references, one table in FROM, sorting, IN lists, and
// calls of the plain aggregates (which read nothing but their input). Any
// other function (now(), random(), catalog functions), subquery or cast to a
// reg* type keeps the statement out of the cache.
bool table_plan_node(const json& node) {
  static const std::unordered_set<std::string_view> kAllowed = [] {
    auto allowed = kTextOnlyNodes;
    allowed.insert({"ColumnRef", "A_Star", "RangeVar", "Alias", "SortBy", "FuncCall", "List"});
    return allowed;
  }();
  static const std::unordered_set<std::string_view> kAggregates = {"count", "sum", "avg", "min", "max"};
  return only_nodes(node, kAllowed, kAggregates);
}

// Analyses reused over an unchanged table (table_analysis_reuses()).
std::atomic<uint64_t> table_reuses{0};
// Analyses made from a shape template (shape_analyses()).
std::atomic<uint64_t> shaped_analyses{0};

// At most this many cached analyses over tables per session (each keeps a
// table snapshot alive); when full they are dropped together.
constexpr size_t kMaxCachedTableAnalyses = 16;

// Whether an analysis may be reused for the same text, parameter types and settings.
bool reusable_analysis(const Session::Analyzed& a) {
  if (a.is_empty()) return true;
  if (a.kind == "TransactionStmt" || a.kind == "VariableSetStmt" || a.kind == "VariableShowStmt" ||
      a.kind == "DiscardStmt") {
    return true;
  }
  return a.kind == "SelectStmt" && text_only_node(a.node());
}

// Analysis cache key: the text, then the parameter type OIDs as bytes.
std::string analysis_key(std::string_view sql, const std::vector<uint32_t>& types) {
  std::string key;
  key.reserve(sql.size() + 1 + types.size() * sizeof(uint32_t));
  key.append(sql);
  key.push_back('\0');
  key.append(reinterpret_cast<const char*>(types.data()), types.size() * sizeof(uint32_t));
  return key;
}

// Entries of one session's analysis cache; on overflow it starts over.
constexpr size_t kMaxCachedAnalyses = 256;

class SessionPreparedStatement final : public protocol::PreparedStatement {
 public:
  explicit SessionPreparedStatement(std::shared_ptr<const Session::Analyzed> analyzed) : analyzed(std::move(analyzed)) {}
  std::vector<uint32_t> parameter_types() const override { return analyzed->parameter_types; }
  std::optional<std::vector<protocol::FieldDescription>> result_fields() const override { return analyzed->fields; }
  std::shared_ptr<const Session::Analyzed> analyzed;
};

class SessionPortal final : public protocol::Portal {
 public:
  SessionPortal(Session* session, std::shared_ptr<const Session::Analyzed> analyzed, std::vector<Value> parameters,
                std::vector<protocol::Format> formats)
      : session_(session), analyzed_(std::move(analyzed)), parameters_(std::move(parameters)),
        formats_(std::move(formats)) {}

  std::optional<std::vector<protocol::FieldDescription>> result_fields() const override {
    if (!analyzed_->fields) return std::nullopt;
    auto fields = *analyzed_->fields;
    for (size_t i = 0; i < fields.size(); ++i) fields[i].format = formats_[i];
    return fields;
  }

  bool execute(uint64_t max_rows, protocol::ResultWriter& out) override {
    // An empty statement answers EmptyQueryResponse in place of CommandComplete,
    // as PostgreSQL's exec_execute_message does (query_handler.hpp, Portal::execute).
    if (analyzed_->is_empty()) {
      out.empty_query();
      return true;
    }
    if (!result_) {
      result_ = session_->execute(*analyzed_, parameters_, out);
      statement_timeline().stamp(StatementTimeline::result_ready);
      if (result_->returns_rows) {
        auto fields = result_->fields;
        for (size_t i = 0; i < fields.size() && i < formats_.size(); ++i) fields[i].format = formats_[i];
        out.row_description(fields);
      }
    }
    if (!result_->returns_rows) {
      if (!completed_) out.command_complete(result_->tag);
      completed_ = true;
      return true;
    }
    if (formats_.size() < result_->columns.size()) formats_.resize(result_->columns.size(), protocol::Format::text);
    const size_t sent = stream_rows(*result_, formats_, position_, max_rows, out);
    if (position_ < result_->rows) return false;
    out.release_after_reply(std::move(result_->retained));
    if (result_->tag == "SELECT") out.command_complete("SELECT " + std::to_string(sent));
    else if (result_->tag == "FETCH" || result_->tag == "MOVE") out.command_complete(result_->tag + " " + std::to_string(sent));
    else out.command_complete(result_->tag);
    completed_ = true;
    return true;
  }

 private:
  Session* session_;
  std::shared_ptr<const Session::Analyzed> analyzed_;
  std::vector<Value> parameters_;
  std::vector<protocol::Format> formats_;
  std::optional<ResultSet> result_;
  size_t position_ = 0;
  bool completed_ = false;
};

}  // namespace

Session::Session(Database* database, TableProvider* tables, const protocol::SessionInfo& info)
    : database_(database), tables_(tables), info_(info) {
  settings_.apply_startup(info.startup_parameters);
  settings_.initialize("session_authorization", info.user);
  if (database_ && database_->config().statement_timeout_ms > 0) {
    settings_.set_default("statement_timeout", std::to_string(database_->config().statement_timeout_ms));
  }
}

std::optional<uint64_t> Session::statement_timeout_ms() const { return settings_.milliseconds("statement_timeout"); }

Session::~Session() {
  // The shapes of the analyses this session made but had no use for yet go
  // to the process's shared ones (a client that connects per statement gets
  // them in its next connection). Best effort: nothing may escape here.
  try {
    if (!pending_shapes_.empty() && plan_reuse()) make_pending_shapes();
  } catch (...) {
  }
}

PlanContext Session::make_plan_context(std::vector<uint32_t>* parameter_types) {
  PlanContext pc;
  pc.tables = tables_;
  pc.settings = &settings_;
  pc.parameter_types = parameter_types;
  pc.user = info_.user;
  pc.database = info_.database;
  pc.backend_pid = info_.process_id;
  return pc;
}

ExecContext Session::make_exec_context(const std::vector<Value>* parameters) {
  ExecContext ec;
  ec.parameters = parameters;
  ec.cancel = info_.cancel;
  ec.threads = database_ ? database_->config().cpu_threads : 1;
  ec.memory_budget = database_ ? database_->config().cpu_memory_budget : 0;
  ec.engine = settings_.get("tally.engine").value_or("auto");
  if (database_) database_->prepare(ec, settings_);  // GPU engine, tally.variant, tally.launch_config
  return ec;
}

std::vector<std::pair<std::string, std::string>> Session::initial_parameter_status() { return settings_.reported(); }

protocol::TransactionStatus Session::transaction_status() const {
  switch (state_) {
    case TxState::idle: return protocol::TransactionStatus::idle;
    case TxState::in_block: return protocol::TransactionStatus::in_block;
    case TxState::failed: return protocol::TransactionStatus::failed;
  }
  return protocol::TransactionStatus::idle;
}

void Session::on_error() {
  if (state_ == TxState::in_block) state_ = TxState::failed;
}

void Session::sync() { ++epoch_; }

void Session::report_changed(const std::vector<std::string>& names, protocol::ResultWriter& out) {
  for (const auto& name : names) out.parameter_status(name, settings_.get(name).value_or(""));
}

void Session::check_not_failed(const std::string& kind, const json& node) const {
  if (state_ != TxState::failed) return;
  if (kind == "TransactionStmt") {
    const std::string k = node.begin().value().value("kind", "");
    if (k == "TRANS_STMT_ROLLBACK" || k == "TRANS_STMT_COMMIT" || k == "TRANS_STMT_ROLLBACK_TO" ||
        k == "TRANS_STMT_PREPARE" || k == "TRANS_STMT_COMMIT_PREPARED" || k == "TRANS_STMT_ROLLBACK_PREPARED") {
      return;
    }
  }
  throw Error(SqlState::in_failed_sql_transaction,
              "current transaction is aborted, commands ignored until end of transaction block");
}

Session::Analyzed Session::analyze(std::string_view sql, const ParsedStatement& statement,
                                   std::vector<uint32_t> parameter_types) {
  try {
    return analyze_checked(sql, statement, std::move(parameter_types));
  } catch (const nlohmann::json::exception& e) {
    throw Error(SqlState::feature_not_supported, std::string("unsupported statement form: ") + e.what());
  }
}

Session::Analyzed Session::analyze_checked(std::string_view sql, const ParsedStatement& statement,
                                           std::vector<uint32_t> parameter_types) {
  Analyzed a;
  a.sql = std::string(sql);
  a.statement = statement;
  a.parameter_types = std::move(parameter_types);
  a.planned_at = epoch_;
  if (a.is_empty()) return a;
  a.kind = statement.type();
  const json& body = statement.body();
  PlanContext pc = make_plan_context(&a.parameter_types);
  if (a.kind == "SelectStmt") {
    if (body.contains("intoClause")) throw Error(SqlState::feature_not_supported, "SELECT INTO is not supported");
    a.select = plan_select(body, pc);
    a.fields = select_fields(*a.select);
    a.settings_generation = settings_.generation();
    const auto& table = select_table(*a.select);
    a.reusable_over_table = table != nullptr && table->version() != nullptr && table_plan_node(statement.node());
  } else if (a.kind == "DeclareCursorStmt") {
    a.select = plan_select(body["query"]["SelectStmt"], pc);
  } else if (a.kind == "VariableShowStmt") {
    const std::string name = body.value("name", "");
    if (name == "all") {
      a.fields = std::vector<protocol::FieldDescription>{describe_column("name", {TypeId::text}),
                                                        describe_column("setting", {TypeId::text}),
                                                        describe_column("description", {TypeId::text})};
    } else {
      a.fields = std::vector<protocol::FieldDescription>{describe_column(name, {TypeId::text})};
    }
  } else if (a.kind == "ExplainStmt") {
    a.fields = std::vector<protocol::FieldDescription>{describe_column("QUERY PLAN", {TypeId::text})};
    const json& query = body["query"];
    if (query.contains("SelectStmt")) a.select = plan_select(query["SelectStmt"], pc);
  } else if (a.kind == "FetchStmt") {
    auto it = cursors_.find(body.value("portalname", ""));
    if (it != cursors_.end()) a.fields = it->second.result.fields;
  }
  // Parameters nobody constrained: PostgreSQL reports 42P18.
  for (size_t i = 0; i < a.parameter_types.size(); ++i) {
    if (a.parameter_types[i] == 0 || a.parameter_types[i] == oid::unknown) {
      throw Error(SqlState::indeterminate_datatype,
                  "could not determine data type of parameter $" + std::to_string(i + 1));
    }
  }
  return a;
}

const std::string& Session::planning_settings() {
  if (planning_settings_at_ != settings_.generation()) {
    planning_settings_ = planning_settings_fingerprint(settings_.snapshot());
    plan_reuse_ = settings_.get("tally.plan_reuse").value_or("on") == "on";
    planning_settings_at_ = settings_.generation();
  }
  return planning_settings_;
}

std::shared_ptr<const Session::Analyzed> Session::analyze_shared(std::string_view sql, const ParsedStatement& statement,
                                                                 std::vector<uint32_t> parameter_types,
                                                                 uint64_t shared_uses) {
  if (analysis_cache_settings_ != settings_.generation()) {
    analysis_cache_.clear();
    table_analyses_ = 0;
    analysis_cache_settings_ = settings_.generation();
  }
  std::string key = analysis_key(sql, parameter_types);
  if (auto it = analysis_cache_.find(key); it != analysis_cache_.end()) {
    if (!it->second->reusable_over_table) return it->second;
    if (reads_current_table(*it->second)) {
      if (it->second->runs) it->second->runs->fetch_add(1, std::memory_order_relaxed);
      // Current now: the Bind that follows in this epoch need not look again.
      validated_ = it->second.get();
      validated_at_ = epoch_;
      return it->second;
    }
    analysis_cache_.erase(it);  // its table changed: analyzed again below
    --table_analyses_;
  }
  // Another session's analysis of this text under the same planning
  // settings, over the table's current snapshot, is the one this session
  // would make. Only a SELECT can be one (the cheap test first).
  std::string shared_key;
  const bool may_share = tables_ != nullptr && statement.tree && statement.type() == "SelectStmt" && plan_reuse();
  if (may_share) {
    shared_key.reserve(planning_settings().size() + 1 + key.size());
    shared_key.append(planning_settings()).push_back('\0');
    shared_key.append(key);
    if (auto found = find_shared_analysis(shared_key)) {
      // This session's generation and epoch: its own cache's checks hold as for its own analyses.
      auto mine = std::make_shared<Analyzed>(*found);
      mine->settings_generation = settings_.generation();
      mine->planned_at = epoch_;
      if (reads_current_table(*mine)) {
        if (mine->runs) mine->runs->fetch_add(1, std::memory_order_relaxed);
        count_shared_analysis_reuse();
        std::shared_ptr<const Analyzed> taken = std::move(mine);
        if (table_analyses_ >= kMaxCachedTableAnalyses) {
          std::erase_if(analysis_cache_, [](const auto& entry) { return entry.second->reusable_over_table; });
          table_analyses_ = 0;
        }
        if (analysis_cache_.size() >= kMaxCachedAnalyses) {
          analysis_cache_.clear();
          table_analyses_ = 0;
        }
        ++table_analyses_;
        analysis_cache_.emplace(std::move(key), taken);
        validated_ = taken.get();
        validated_at_ = epoch_;
        remember_shape(taken);
        return taken;
      }
    }
  }
  auto made = std::make_shared<Analyzed>(analyze(sql, statement, std::move(parameter_types)));
  if (may_share && made->reusable_over_table) made->runs = std::make_shared<std::atomic<uint64_t>>(1);
  std::shared_ptr<const Analyzed> analyzed = std::move(made);
  if (analyzed->runs) {
    share_analysis(shared_key, planning_settings(), sql, analyzed, shared_uses > 0 ? shared_uses - 1 : 0);
    remember_shape(analyzed);
  }
  if (reusable_analysis(*analyzed) || analyzed->reusable_over_table) {
    if (analysis_cache_.size() >= kMaxCachedAnalyses) {
      analysis_cache_.clear();
      table_analyses_ = 0;
    }
    if (analyzed->reusable_over_table && table_analyses_ >= kMaxCachedTableAnalyses) {
      std::erase_if(analysis_cache_, [](const auto& entry) { return entry.second->reusable_over_table; });
      table_analyses_ = 0;
    }
    table_analyses_ += analyzed->reusable_over_table ? 1 : 0;
    analysis_cache_.emplace(std::move(key), analyzed);
  }
  return analyzed;
}

bool Session::reads_current_table(const Analyzed& a) const {
  if (!a.reusable_over_table || !a.select || a.settings_generation != settings_.generation() || tables_ == nullptr) {
    return false;
  }
  const auto& table = select_table(*a.select);
  const auto current = tables_->find_table("", table->name());
  if (!current) return false;
  const auto version = current->version();
  if (version == nullptr || version != table->version()) return false;
  table_reuses.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t table_analysis_reuses() { return table_reuses.load(std::memory_order_relaxed); }

std::shared_ptr<const Session::Analyzed> Session::analysis_for_bind(std::shared_ptr<const Analyzed> analyzed) {
  const bool stale = analyzed->kind == "SelectStmt" && analyzed->planned_at != epoch_ &&
                     analyzed->body().contains("fromClause");
  ++epoch_;
  const bool validated = analyzed.get() == validated_ && validated_at_ == epoch_ - 1;
  validated_ = nullptr;
  if (!stale || validated || reads_current_table(*analyzed)) return analyzed;
  // An analysis made from another text's (from_shape) holds that text's tree: parse this one.
  const ParsedStatement statement = analyzed->from_shape ? parse_sql_shared(analyzed->sql)->front() : analyzed->statement;
  auto fresh = std::make_shared<Analyzed>(analyze(analyzed->sql, statement, analyzed->parameter_types));
  const auto same_type = [](const protocol::FieldDescription& a, const protocol::FieldDescription& b) {
    return a.type_oid == b.type_oid && a.type_modifier == b.type_modifier;
  };
  if (!analyzed->fields || !fresh->fields ||
      !std::equal(analyzed->fields->begin(), analyzed->fields->end(), fresh->fields->begin(), fresh->fields->end(),
                  same_type)) {
    throw Error(SqlState::feature_not_supported, "cached plan must not change result type");
  }
  return fresh;
}

ResultSet Session::execute(const Analyzed& statement, const std::vector<Value>& parameters,
                           protocol::ResultWriter& out) {
  try {
    return execute_checked(statement, parameters, out);
  } catch (const nlohmann::json::exception& e) {
    // A parse-tree shape this code did not expect: a clean error, never a crash.
    throw Error(SqlState::feature_not_supported, std::string("unsupported statement form: ") + e.what());
  }
}

ResultSet Session::execute_checked(const Analyzed& statement, const std::vector<Value>& parameters,
                                   protocol::ResultWriter& out) {
  if (statement.is_empty()) return command("");
  const std::string& kind = statement.kind;
  check_not_failed(kind, statement.node());
  if (info_.cancel != nullptr) info_.cancel->check();
  const json& body = statement.body();
  if (kind == "SelectStmt") {
    ExecContext ec = make_exec_context(&parameters);
    ec.stream_to_client = true;  // simple query and portals only stream the result (stream_rows)
    return run_select(*statement.select, ec);
  }
  if (kind == "TransactionStmt") return run_transaction_statement(body, out);
  if (kind == "VariableSetStmt") return run_set(body, out);
  if (kind == "VariableShowStmt") return run_show(body);
  if (kind == "DiscardStmt") return run_discard(body, out);
  if (kind == "ExplainStmt") return run_explain(body, parameters);
  if (kind == "DeclareCursorStmt" || kind == "FetchStmt" || kind == "ClosePortalStmt") {
    return run_cursor_statement(kind, body, parameters, out);
  }
  if (auto routed = route_statement(*this, statement, parameters, out)) return std::move(*routed);
  throw Error(SqlState::feature_not_supported, "statement " + kind + " is not supported");
}

ResultSet Session::run_transaction_statement(const json& body, protocol::ResultWriter& out) {
  const std::string kind = body.value("kind", "");
  auto warn = [&](SqlState state, const std::string& message) {
    out.notice(Error(state, message, Severity::warning));
  };
  if (kind == "TRANS_STMT_BEGIN" || kind == "TRANS_STMT_START") {
    for (const auto& option : body.value("options", json::array())) {
      const auto& def = option["DefElem"];
      const std::string name = def.value("defname", "");
      if (name == "transaction_isolation") settings_.set("transaction_isolation", const_to_string(def["arg"]));
      if (name == "transaction_read_only") {
        settings_.set("transaction_read_only", def["arg"]["A_Const"]["ival"].value("ival", 0) ? "on" : "off");
      }
    }
    if (state_ != TxState::idle) {
      warn(SqlState::active_sql_transaction, "there is already a transaction in progress");
    } else {
      state_ = TxState::in_block;
      settings_at_begin_ = settings_.snapshot();
    }
    return command(kind == "TRANS_STMT_BEGIN" ? "BEGIN" : "START TRANSACTION");
  }
  if (kind == "TRANS_STMT_COMMIT" || kind == "TRANS_STMT_ROLLBACK") {
    const bool failed = state_ == TxState::failed;
    if (state_ == TxState::idle) {
      warn(SqlState::no_active_sql_transaction, "there is no transaction in progress");
    } else if (kind == "TRANS_STMT_ROLLBACK" || failed) {
      report_changed(settings_.restore(settings_at_begin_), out);
    }
    state_ = TxState::idle;
    settings_.initialize("transaction_isolation", settings_.get("default_transaction_isolation").value_or("read committed"));
    cursors_.clear();  // cursors without HOLD end with their transaction
    if (kind == "TRANS_STMT_ROLLBACK" || failed) return command("ROLLBACK");
    return command("COMMIT");
  }
  if (kind == "TRANS_STMT_SAVEPOINT" || kind == "TRANS_STMT_RELEASE" || kind == "TRANS_STMT_ROLLBACK_TO") {
    const char* what = kind == "TRANS_STMT_SAVEPOINT" ? "SAVEPOINT" : (kind == "TRANS_STMT_RELEASE" ? "RELEASE SAVEPOINT" : "ROLLBACK TO SAVEPOINT");
    if (state_ == TxState::idle) {
      throw Error(SqlState::no_active_sql_transaction, std::string(what) + " can only be used in transaction blocks");
    }
    if (kind == "TRANS_STMT_ROLLBACK_TO") state_ = TxState::in_block;
    return command(kind == "TRANS_STMT_SAVEPOINT" ? "SAVEPOINT" : (kind == "TRANS_STMT_RELEASE" ? "RELEASE" : "ROLLBACK"));
  }
  throw Error(SqlState::feature_not_supported, "two-phase commit is not supported");
}

ResultSet Session::run_set(const json& body, protocol::ResultWriter& out) {
  const std::string kind = body.value("kind", "");
  std::string name = body.value("name", "");
  if (name == "timezone") name = "TimeZone";
  if (kind == "VAR_RESET_ALL") {
    report_changed(settings_.reset_all(), out);
    return command("RESET");
  }
  if (kind == "VAR_SET_MULTI") {
    // SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION ...
    const bool session_default = name == "SESSION CHARACTERISTICS";
    for (const auto& arg : body.value("args", json::array())) {
      const auto& def = arg["DefElem"];
      const std::string option = def.value("defname", "");
      if (option == "transaction_isolation") {
        settings_.set(session_default ? "default_transaction_isolation" : "transaction_isolation", const_to_string(def["arg"]));
      } else if (option == "transaction_read_only") {
        const bool ro = def["arg"]["A_Const"]["ival"].value("ival", 0) != 0;
        settings_.set(session_default ? "default_transaction_read_only" : "transaction_read_only", ro ? "on" : "off");
      }
    }
    return command("SET");
  }
  std::pair<std::string, bool> changed;
  if (kind == "VAR_SET_DEFAULT" || kind == "VAR_RESET") {
    changed = settings_.reset(name);
  } else if (kind == "VAR_SET_VALUE") {
    changed = settings_.set(name, set_value(name, body.value("args", json::array())));
  } else {
    throw Error(SqlState::feature_not_supported, "SET FROM CURRENT is not supported");
  }
  if (changed.second) out.parameter_status(changed.first, settings_.get(changed.first).value_or(""));
  return command(kind == "VAR_RESET" ? "RESET" : "SET");
}

ResultSet Session::run_show(const json& body) {
  std::string name = body.value("name", "");
  if (name == "all") {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [n, v, d] : settings_.all()) rows.push_back({n, v, d});
    return text_rows({"name", "setting", "description"}, rows);
  }
  if (name == "timezone") name = "TimeZone";
  auto value = settings_.get(name);
  if (!value) throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + name + "\"");
  std::string column = settings_.canonical_name(name);
  return text_rows({column}, {{*value}});
}

ResultSet Session::run_discard(const json& body, protocol::ResultWriter& out) {
  const std::string target = body.value("target", "");
  if (target == "DISCARD_ALL") {
    if (state_ != TxState::idle) {
      throw Error(SqlState::active_sql_transaction, "DISCARD ALL cannot run inside a transaction block");
    }
    report_changed(settings_.reset_all(), out);
    cursors_.clear();
    return command("DISCARD ALL");
  }
  if (target == "DISCARD_PLANS") return command("DISCARD PLANS");
  if (target == "DISCARD_SEQUENCES") return command("DISCARD SEQUENCES");
  return command("DISCARD TEMP");
}

ResultSet Session::run_explain(const json& body, const std::vector<Value>& parameters) {
  bool analyze = false;
  for (const auto& option : body.value("options", json::array())) {
    if (option["DefElem"].value("defname", "") == "analyze") {
      const auto& arg = option["DefElem"];
      analyze = !arg.contains("arg") || const_to_string(arg["arg"]) != "false";
    }
  }
  const json& query = body["query"];
  if (!query.contains("SelectStmt")) throw Error(SqlState::feature_not_supported, "EXPLAIN supports SELECT only");
  std::vector<uint32_t> types;
  PlanContext pc = make_plan_context(&types);
  auto plan = plan_select(query["SelectStmt"], pc);
  std::vector<std::string> lines = explain_select(*plan);
  if (analyze) {
    ExecContext ec = make_exec_context(&parameters);
    std::vector<std::string> details;
    ec.explain = &details;
    run_select(*plan, ec);
    lines.insert(lines.end(), details.begin(), details.end());
  }
  std::vector<std::vector<std::string>> rows;
  for (auto& line : lines) rows.push_back({line});
  ResultSet r = text_rows({"QUERY PLAN"}, rows);
  r.tag = "EXPLAIN";
  return r;
}

ResultSet Session::run_cursor_statement(const std::string& kind, const json& body, const std::vector<Value>& parameters,
                                        protocol::ResultWriter& out) {
  (void)out;
  if (kind == "DeclareCursorStmt") {
    const std::string name = body.value("portalname", "");
    const int options = body.value("options", 0);
    constexpr int kCursorOptHold = 0x0020;  // CURSOR_OPT_HOLD in parsenodes.h
    if (state_ == TxState::idle && !(options & kCursorOptHold)) {
      throw Error(SqlState::no_active_sql_transaction, "DECLARE CURSOR can only be used in transaction blocks");
    }
    if (cursors_.count(name)) throw Error(SqlState::duplicate_cursor, "cursor \"" + name + "\" already exists");
    std::vector<uint32_t> types;
    PlanContext pc = make_plan_context(&types);
    auto plan = plan_select(body["query"]["SelectStmt"], pc);
    ExecContext ec = make_exec_context(&parameters);
    cursors_[name] = Cursor{run_select(*plan, ec), 0};
    return command("DECLARE CURSOR");
  }
  if (kind == "ClosePortalStmt") {
    if (!body.contains("portalname")) {
      cursors_.clear();
      return command("CLOSE CURSOR ALL");
    }
    const std::string name = body.value("portalname", "");
    if (!cursors_.erase(name)) throw Error(SqlState::invalid_cursor_name, "cursor \"" + name + "\" does not exist");
    return command("CLOSE CURSOR");
  }
  // FETCH / MOVE
  const std::string name = body.value("portalname", "");
  auto it = cursors_.find(name);
  if (it == cursors_.end()) throw Error(SqlState::invalid_cursor_name, "cursor \"" + name + "\" does not exist");
  Cursor& cursor = it->second;
  const std::string direction = body.value("direction", "FETCH_FORWARD");
  int64_t count = body.contains("howMany") ? body["howMany"].get<int64_t>() : 1;
  constexpr int64_t kFetchAll = INT64_MAX;  // FETCH ALL comes as LONG_MAX
  if (direction != "FETCH_FORWARD") throw Error(SqlState::feature_not_supported, "only forward FETCH is supported");
  if (count == 0 && body.contains("howMany")) count = 0;
  size_t from = cursor.position;
  size_t to = count >= kFetchAll || cursor.position + static_cast<size_t>(count) > cursor.result.rows
                  ? cursor.result.rows
                  : cursor.position + static_cast<size_t>(count);
  cursor.position = to;
  const bool is_move = body.value("ismove", false);
  ResultSet r;
  r.tag = is_move ? "MOVE" : "FETCH";
  r.fields = cursor.result.fields;
  r.returns_rows = !is_move;
  for (const auto& column : cursor.result.columns) {
    Vector part(column.type);
    part.reserve(to - from);
    for (size_t i = from; i < to; ++i) part.push(column.get(i));
    r.columns.push_back(std::move(part));
  }
  r.rows = to - from;
  if (is_move) r.tag = "MOVE " + std::to_string(to - from);
  return r;
}

void Session::simple_query(std::string_view sql, protocol::ResultWriter& out) {
  auto statements = find_parsed(sql);
  if (!statements && (!shapes_.empty() || !pending_shapes_.empty() || shared_shapes_exist()) && plan_reuse()) {
    // A text this process never parsed that differs from one this session
    // analyzed only in literal values: no parse, no analysis.
    if (auto shaped = analysis_by_shape(sql)) {
      statement_timeline().stamp(StatementTimeline::parsed);
      check_not_failed(shaped->kind, shaped->node());
      std::shared_ptr<const Analyzed> analyzed = analysis_for_bind(std::move(shaped));
      statement_timeline().stamp(StatementTimeline::analyzed);
      run_simple(*analyzed, out);
      return;
    }
  }
  if (!statements) statements = parse_sql_shared(sql);
  statement_timeline().stamp(StatementTimeline::parsed);
  if (statements->empty()) {
    out.empty_query();
    return;
  }
  for (const auto& parsed : *statements) {
    check_not_failed(parsed.type(), parsed.node());
    // Only a single statement's analysis is cached: the cache key is the text.
    std::shared_ptr<const Analyzed> analyzed =
        statements->size() == 1 ? analyze_shared(sql, parsed, {}) : std::make_shared<const Analyzed>(analyze(sql, parsed, {}));
    analyzed = analysis_for_bind(std::move(analyzed));
    statement_timeline().stamp(StatementTimeline::analyzed);
    run_simple(*analyzed, out);
  }
}

void Session::run_simple(const Analyzed& analyzed, protocol::ResultWriter& out) {
  ResultSet result = execute(analyzed, {}, out);
  statement_timeline().stamp(StatementTimeline::result_ready);
  if (result.returns_rows) {
    out.row_description(result.fields);
    std::vector<protocol::Format> formats(result.columns.size(), protocol::Format::text);
    size_t position = 0;
    const size_t sent = stream_rows(result, formats, position, 0, out);
    out.release_after_reply(std::move(result.retained));
    if (result.tag == "SELECT" || result.tag == "FETCH") out.command_complete(result.tag + " " + std::to_string(sent));
    else out.command_complete(result.tag);
  } else {
    out.command_complete(result.tag);
  }
}

// Shape templates kept per session; on overflow they start over.
constexpr size_t kMaxShapeTemplates = 32;

// Analyses waiting to become shape templates: at most this many (the latest).
constexpr size_t kMaxPendingShapes = 8;

void Session::remember_shape(const std::shared_ptr<const Analyzed>& analyzed) {
  if (!analyzed->reusable_over_table || !analyzed->select || !analyzed->parameter_types.empty() ||
      analyzed->from_shape) {
    return;
  }
  // Made into a template when a text this process has not parsed comes
  // (make_pending_shapes): the statement being analyzed does not wait for it.
  if (pending_shapes_.size() >= kMaxPendingShapes) pending_shapes_.erase(pending_shapes_.begin());
  pending_shapes_.push_back(analyzed);
}

void Session::make_pending_shapes() {
  for (const auto& analyzed : pending_shapes_) make_shape(analyzed);
  pending_shapes_.clear();
}

void Session::make_shape(const std::shared_ptr<const Analyzed>& analyzed) {
  auto shape = shape_of(analyzed->sql);
  if (!shape) return;
  // A shared analysis (or a re-planned one) whose template another session
  // made already: the same plan, so the same slots; no walk of the tree.
  const std::string shared_key = planning_settings() + '\0' + shape->key;
  if (auto found = find_shared_shape(shared_key); found && found->analyzed->select == analyzed->select) {
    ShapeTemplate t = *found;
    t.analyzed = analyzed;
    if (shapes_.size() >= kMaxShapeTemplates) shapes_.clear();
    shapes_.insert_or_assign(std::move(shape->key), std::move(t));
    return;
  }
  const auto slots = shape_slots(*shape, analyzed->body(), *analyzed->select);
  if (slots.empty()) return;
  ShapeTemplate t;
  t.analyzed = analyzed;
  for (size_t i = 0; i < slots.size(); ++i) {
    t.values.push_back(shape->literals[i].value);
    t.slots.emplace_back(slots[i].location, slots[i].negated);
  }
  if (shapes_.size() >= kMaxShapeTemplates) shapes_.clear();
  share_shape(shared_key, std::make_shared<const ShapeTemplate>(t));
  shapes_.insert_or_assign(std::move(shape->key), std::move(t));
}

const Session::ShapeTemplate* Session::shape_template(const std::string& key) {
  if (auto it = shapes_.find(key); it != shapes_.end()) return &it->second;
  if (!shared_shapes_exist()) return nullptr;
  auto found = find_shared_shape(planning_settings() + '\0' + key);
  if (!found) return nullptr;
  // This session's generation and epoch, as a shared analysis taken (analyze_shared).
  auto mine = std::make_shared<Analyzed>(*found->analyzed);
  mine->settings_generation = settings_.generation();
  mine->planned_at = epoch_;
  if (!reads_current_table(*mine)) return nullptr;
  ShapeTemplate t = *found;
  t.analyzed = std::move(mine);
  if (shapes_.size() >= kMaxShapeTemplates) shapes_.clear();
  return &shapes_.insert_or_assign(key, std::move(t)).first->second;
}

std::shared_ptr<const Session::Analyzed> Session::analysis_by_shape(std::string_view sql) {
  make_pending_shapes();
  if (shapes_.empty() && !shared_shapes_exist()) return nullptr;
  auto shape = shape_of(sql);
  if (!shape) return nullptr;
  const ShapeTemplate* found = shape_template(shape->key);
  if (found == nullptr) return nullptr;
  const ShapeTemplate& t = *found;
  if (t.values.size() != shape->literals.size()) return nullptr;
  std::vector<std::pair<int, int64_t>> values;
  for (size_t i = 0; i < t.values.size(); ++i) {
    const int64_t value = shape->literals[i].value;
    const auto [location, negated] = t.slots[i];
    if (location < 0) {
      if (value != t.values[i]) return nullptr;  // a literal that must stay as it is
    } else {
      values.emplace_back(location, negated ? -value : value);
    }
  }
  // Current as an analysis of the template's own text would be.
  if (!reads_current_table(*t.analyzed)) {
    shapes_.erase(shape->key);
    return nullptr;
  }
  auto plan = plan_with_literals(*t.analyzed->select, values);
  if (!plan) return nullptr;
  auto made = std::make_shared<Analyzed>();
  made->sql = std::string(sql);
  made->statement = t.analyzed->statement;
  made->kind = t.analyzed->kind;
  made->select = std::move(plan);
  made->fields = t.analyzed->fields;
  made->planned_at = epoch_;
  made->reusable_over_table = true;
  made->settings_generation = t.analyzed->settings_generation;
  made->from_shape = true;
  shaped_analyses.fetch_add(1, std::memory_order_relaxed);
  return made;
}

bool Session::has_shape(std::string_view sql) {
  if ((shapes_.empty() && pending_shapes_.empty() && !shared_shapes_exist()) || !plan_reuse()) return false;
  make_pending_shapes();
  auto shape = shape_of(sql);
  return shape && shape_template(shape->key) != nullptr;
}

uint64_t shape_analyses() { return shaped_analyses.load(std::memory_order_relaxed); }

std::unique_ptr<protocol::PreparedStatement> Session::prepare(std::string_view sql,
                                                              std::span<const uint32_t> param_types) {
  const auto statements = parse_sql_shared(sql);
  if (statements->size() > 1) {
    throw Error(SqlState::syntax_error, "cannot insert multiple commands into a prepared statement");
  }
  std::vector<uint32_t> types(param_types.begin(), param_types.end());
  for (uint32_t t : types) {
    if (t != 0 && !type_from_oid(t)) {
      throw Error(SqlState::feature_not_supported, "parameter type " + std::to_string(t) + " is not supported");
    }
  }
  if (statements->empty()) {
    return std::make_unique<SessionPreparedStatement>(analyze_shared(sql, ParsedStatement{}, std::move(types)));
  }
  const ParsedStatement& statement = statements->front();
  check_not_failed(statement.type(), statement.node());
  return std::make_unique<SessionPreparedStatement>(analyze_shared(sql, statement, std::move(types)));
}

std::unique_ptr<protocol::Portal> Session::bind(protocol::PreparedStatement& statement,
                                                std::span<const protocol::ParameterValue> parameters,
                                                std::span<const protocol::Format> result_formats) {
  auto& prepared = dynamic_cast<SessionPreparedStatement&>(statement);
  if (!prepared.analyzed->is_empty()) check_not_failed(prepared.analyzed->kind, prepared.analyzed->node());
  const std::shared_ptr<const Analyzed> analyzed = analysis_for_bind(prepared.analyzed);
  // A new analysis over a table's new snapshot serves the statement's next
  // Binds too (reads_current_table), as PostgreSQL keeps a re-made plan.
  if (analyzed != prepared.analyzed && analyzed->reusable_over_table) prepared.analyzed = analyzed;
  if (parameters.size() != analyzed->parameter_types.size()) {
    throw Error(SqlState::protocol_violation,
                "bind message supplies " + std::to_string(parameters.size()) + " parameters, but prepared statement \"\" requires " +
                    std::to_string(analyzed->parameter_types.size()));
  }
  std::vector<Value> values;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto id = type_from_oid(analyzed->parameter_types[i]).value_or(TypeId::text);
    const SqlType type{id};
    if (!parameters[i].bytes) {
      values.push_back(Null{});
    } else if (parameters[i].format == protocol::Format::binary) {
      values.push_back(parse_binary(type, *parameters[i].bytes));
    } else {
      values.push_back(parse_text(type, *parameters[i].bytes));
    }
  }
  const size_t columns = analyzed->fields ? analyzed->fields->size() : 0;
  std::vector<protocol::Format> formats = expand_formats(result_formats, columns);
  return std::make_unique<SessionPortal>(this, analyzed, std::move(values), std::move(formats));
}

}  // namespace tally::executor
