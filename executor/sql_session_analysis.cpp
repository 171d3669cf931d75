// SqlSession's analysis of statements (bind and plan) and its caches: the
// session's own by text, the process's shared analyses, and the re-plan at
// Bind of a plan over an old table snapshot.
#include "executor/sql_session.hpp"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <unordered_set>

#include "common/error.hpp"
#include "executor/parser.hpp"
#include "executor/dml_parameter_types.hpp"
#include "executor/explain_options.hpp"
#include "executor/row_locks.hpp"
#include "executor/select_plan.hpp"
#include "executor/shared_analyses.hpp"
#include "executor/table_provider.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

// Node types of a statement whose analysis depends on nothing but its text,
// its parameter types and the session's settings (text_only_node); a SELECT
// over a table adds a few (table_plan_node).
const std::unordered_set<std::string_view> kTextOnlyNodes = {
    "SelectStmt", "ResTarget",   "A_Const",  "ParamRef", "TypeCast",    "TypeName",
    "String",     "Integer",     "Float",    "Boolean",  "A_Expr",      "BoolExpr",
    "NullTest",   "BooleanTest", "CaseExpr", "CaseWhen", "CoalesceExpr"};

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
          const auto& text =
              name.contains("String") ? name["String"].value("sval", "") : std::string();
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
  static const std::unordered_set<std::string_view> kAggregates = {"count", "sum", "avg", "min",
                                                                   "max"};
  return only_nodes(node, kAllowed, kAggregates);
}

// Analyses reused over an unchanged table (table_analysis_reuses()).
std::atomic<uint64_t> table_reuses{0};

// At most this many cached analyses over tables per session (each keeps a
// table snapshot alive); when full they are dropped together.
constexpr size_t kMaxCachedTableAnalyses = 16;

// Whether an analysis may be reused for the same text, parameter types and settings.
bool reusable_analysis(const AnalyzedStatement& a) {
  if (a.is_empty()) return true;
  if (a.kind == "TransactionStmt" || a.kind == "VariableSetStmt" || a.kind == "VariableShowStmt" ||
      a.kind == "DiscardStmt") {
    return true;
  }
  return a.kind == "SelectStmt" && text_only_node(a.node());
}

// The columns RETURNING answers (Describe's RowDescription in the extended
// protocol, where Execute sends none): those of the same list selected from
// the target table. Unset when that cannot be planned; the statement then
// fails or answers as it would have.
std::optional<std::vector<tally::FieldDescription>> returning_fields(const json& body, PlanContext& pc) {
  const json select = {{"targetList", body["returningList"]},
                       {"fromClause", json::array({{{"RangeVar", body.at("relation")}}})},
                       {"limitOption", "LIMIT_OPTION_DEFAULT"},
                       {"op", "SETOP_NONE"}};
  try {
    return select_fields(*plan_select(select, pc));
  } catch (const Error&) {
    return std::nullopt;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
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

}  // namespace

AnalyzedStatement SqlSession::analyze(std::string_view sql, const ParsedStatement& statement,
                                      std::vector<uint32_t> parameter_types) {
  try {
    return analyze_checked(sql, statement, std::move(parameter_types));
  } catch (const nlohmann::json::exception& e) {
    throw Error(SqlState::feature_not_supported,
                std::string("unsupported statement form: ") + e.what());
  }
}

AnalyzedStatement SqlSession::analyze_checked(std::string_view sql,
                                              const ParsedStatement& statement,
                                              std::vector<uint32_t> parameter_types) {
  AnalyzedStatement a;
  a.sql = std::string(sql);
  a.statement = statement;
  a.parameter_types = std::move(parameter_types);
  a.planned_at = epoch_;
  if (a.is_empty()) return a;
  a.kind = statement.type();
  const json& body = statement.body();
  PlanContext pc = make_plan_context(&a.parameter_types);
  if (a.kind == "SelectStmt") {
    if (body.contains("intoClause"))
      throw Error(SqlState::feature_not_supported, "SELECT INTO is not supported");
    a.select = plan_select(body, pc);
    a.fields = select_fields(*a.select);
    a.settings_generation = settings_.generation();
    const auto& table = select_table(*a.select);
    a.reusable_over_table =
        table != nullptr && table->version() != nullptr && table_plan_node(statement.node());
  } else if (a.kind == "DeclareCursorStmt") {
    a.select = plan_select(body["query"]["SelectStmt"], pc);
  } else if (a.kind == "VariableShowStmt") {
    const std::string name = body.value("name", "");
    if (name == "all") {
      a.fields = std::vector<tally::FieldDescription>{
          describe_column("name", {TypeId::text}), describe_column("setting", {TypeId::text}),
          describe_column("description", {TypeId::text})};
    } else {
      a.fields = std::vector<tally::FieldDescription>{describe_column(name, {TypeId::text})};
    }
  } else if (a.kind == "ExplainStmt") {
    a.fields = std::vector<tally::FieldDescription>{explain_field(explain_options(body.value("options", json::array())))};
    const json& query = body["query"];
    // (EXPLAIN ANALYZE plans again in run_explain, with ctid as it is.)
    if (query.contains("SelectStmt")) a.select = plan_select(without_row_identity(query["SelectStmt"]), pc);
  } else if ((a.kind == "InsertStmt" || a.kind == "UpdateStmt" || a.kind == "DeleteStmt" || a.kind == "MergeStmt") &&
             tables_ != nullptr) {
    infer_dml_parameter_types(a.kind, body, *tables_, pc);
    if (body.contains("returningList")) a.fields = returning_fields(body, pc);
  } else if (a.kind == "ExecuteStmt" && info_.prepared != nullptr) {
    // Describe of an EXECUTE: the prepared statement's columns.
    if (const auto prepared = info_.prepared->lookup(body.value("name", ""))) a.fields = prepared->result_fields();
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

const std::string& SqlSession::planning_settings() {
  if (planning_settings_at_ != settings_.generation()) {
    planning_settings_ = planning_settings_fingerprint(settings_.snapshot());
    planning_settings_at_ = settings_.generation();
  }
  return planning_settings_;
}

std::shared_ptr<const AnalyzedStatement> SqlSession::analyze_shared(
    std::string_view sql, const ParsedStatement& statement, std::vector<uint32_t> parameter_types) {
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
  const bool may_share = tables_ != nullptr && statement.tree && statement.type() == "SelectStmt";
  if (may_share) {
    shared_key.reserve(planning_settings().size() + 1 + key.size());
    shared_key.append(planning_settings()).push_back('\0');
    shared_key.append(key);
    if (auto found = find_shared_analysis(shared_key)) {
      // This session's generation and epoch: its own cache's checks hold as for its own analyses.
      auto mine = std::make_shared<AnalyzedStatement>(*found);
      mine->settings_generation = settings_.generation();
      mine->planned_at = epoch_;
      if (reads_current_table(*mine)) {
        if (mine->runs) mine->runs->fetch_add(1, std::memory_order_relaxed);
        count_shared_analysis_reuse();
        std::shared_ptr<const AnalyzedStatement> taken = std::move(mine);
        if (table_analyses_ >= kMaxCachedTableAnalyses) {
          std::erase_if(analysis_cache_,
                        [](const auto& entry) { return entry.second->reusable_over_table; });
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
        return taken;
      }
    }
  }
  auto made =
      std::make_shared<AnalyzedStatement>(analyze(sql, statement, std::move(parameter_types)));
  if (may_share && made->reusable_over_table)
    made->runs = std::make_shared<std::atomic<uint64_t>>(1);
  std::shared_ptr<const AnalyzedStatement> analyzed = std::move(made);
  if (analyzed->runs) share_analysis(shared_key, analyzed);
  if (reusable_analysis(*analyzed) || analyzed->reusable_over_table) {
    if (analysis_cache_.size() >= kMaxCachedAnalyses) {
      analysis_cache_.clear();
      table_analyses_ = 0;
    }
    if (analyzed->reusable_over_table && table_analyses_ >= kMaxCachedTableAnalyses) {
      std::erase_if(analysis_cache_,
                    [](const auto& entry) { return entry.second->reusable_over_table; });
      table_analyses_ = 0;
    }
    table_analyses_ += analyzed->reusable_over_table ? 1 : 0;
    analysis_cache_.emplace(std::move(key), analyzed);
  }
  return analyzed;
}

bool SqlSession::reads_current_table(const AnalyzedStatement& a) const {
  if (!a.reusable_over_table || !a.select || a.settings_generation != settings_.generation() ||
      tables_ == nullptr) {
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

std::shared_ptr<const AnalyzedStatement> SqlSession::analysis_for_bind(
    std::shared_ptr<const AnalyzedStatement> analyzed) {
  const bool stale = analyzed->kind == "SelectStmt" && analyzed->planned_at != epoch_ &&
                     analyzed->body().contains("fromClause");
  ++epoch_;
  const bool validated = analyzed.get() == validated_ && validated_at_ == epoch_ - 1;
  validated_ = nullptr;
  if (!stale || validated || reads_current_table(*analyzed)) return analyzed;
  auto fresh = std::make_shared<AnalyzedStatement>(
      analyze(analyzed->sql, analyzed->statement, analyzed->parameter_types));
  const auto same_type = [](const tally::FieldDescription& a,
                            const tally::FieldDescription& b) {
    return a.type_oid == b.type_oid && a.type_modifier == b.type_modifier;
  };
  if (!analyzed->fields || !fresh->fields ||
      !std::equal(analyzed->fields->begin(), analyzed->fields->end(), fresh->fields->begin(),
                  fresh->fields->end(), same_type)) {
    throw Error(SqlState::feature_not_supported, "cached plan must not change result type");
  }
  return fresh;
}

}  // namespace tally::executor
