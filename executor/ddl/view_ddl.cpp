#include "executor/ddl/view_ddl.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "executor/ddl/key_constraints.hpp"
#include "executor/ddl/view_deparse.hpp"
#include "executor/ddl/sequence_ddl.hpp"

namespace tally::executor::ddl {
namespace {

catalog::ViewStore& views_of(const StatementContext& ctx, const char* what) {
  if (!ctx.views) throw Error(SqlState::feature_not_supported, "views need the storage layer, which this build lacks");
  // The catalog commits a view at once; a block's ROLLBACK could not undo it.
  if (ctx.transaction)
    throw Error(SqlState::feature_not_supported, std::string(what) + " inside a transaction block is not supported by Tally");
  return *ctx.views;
}

// Every relation name a SELECT reads (RangeVar nodes), and the names of its
// WITH queries, which shadow relations. A view has no parameters: a $n in
// its query is 42P02, as in PostgreSQL.
void collect_names(const nlohmann::json& node, std::set<std::string>& relations, std::set<std::string>& ctes) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "ParamRef")
        throw Error(SqlState::undefined_parameter, "there is no parameter $" + std::to_string(value.value("number", 0)));
      if (key == "RangeVar" && value.value("schemaname", std::string("public")) == "public")
        relations.insert(value.value("relname", std::string()));
      if (key == "ctename" && value.is_string()) ctes.insert(value.get<std::string>());
      collect_names(value, relations, ctes);
    }
  } else if (node.is_array()) {
    for (const auto& item : node) collect_names(item, relations, ctes);
  }
}

// The oids of the tables and views a view's query reads.
std::vector<uint32_t> dependencies(const nlohmann::json& select, const StatementContext& ctx) {
  std::set<std::string> relations, ctes;
  collect_names(select, relations, ctes);
  std::vector<uint32_t> oids;
  for (const auto& name : relations) {
    if (ctes.count(name)) continue;
    if (auto table = ctx.find_table(name)) oids.push_back(table->def.oid);
    else if (auto view = ctx.views->find(name)) oids.push_back(view->oid);
  }
  return oids;
}

// Whether view `oid` is among what `depends` reads, directly or through views.
bool reaches(const std::vector<uint32_t>& depends, uint32_t oid, const catalog::ViewStore& views) {
  std::vector<uint32_t> work = depends;
  std::set<uint32_t> seen;
  const auto all = views.list();
  while (!work.empty()) {
    const uint32_t at = work.back();
    work.pop_back();
    if (at == oid) return true;
    if (!seen.insert(at).second) continue;
    for (const auto& v : all)
      if (v.oid == at) work.insert(work.end(), v.depends.begin(), v.depends.end());
  }
  return false;
}

// The text after the AS that starts the view's query, up to the statement's
// end (without a trailing semicolon): what pg_get_viewdef shows.
std::string definition_text(std::string_view text, size_t from, size_t end) {
  end = std::min(end, text.size());
  int depth = 0;
  for (size_t i = from; i < end; ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = text.find(c, i + 1);
      if (i == std::string_view::npos || i >= end) break;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (depth == 0 && (c == 'a' || c == 'A') && i + 1 < end && std::tolower(text[i + 1]) == 's' &&
               i > from && (std::isspace(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == ')' || text[i - 1] == '"') &&
               (i + 2 >= end || !std::isalnum(static_cast<unsigned char>(text[i + 2])))) {
      std::string out(text.substr(i + 2, end - i - 2));
      while (!out.empty() && (std::isspace(static_cast<unsigned char>(out.back())) || out.back() == ';')) out.pop_back();
      const size_t start = out.find_first_not_of(" \t\r\n");
      return start == std::string::npos ? std::string() : out.substr(start);
    }
  }
  return {};
}

// CREATE OR REPLACE VIEW may add columns at the end only (checkViewTupleDesc).
void check_replacement(const catalog::ViewDef& old_view, const std::vector<catalog::ViewColumn>& columns) {
  if (columns.size() < old_view.columns.size())
    throw Error(SqlState::invalid_table_definition, "cannot drop columns from view");
  for (size_t i = 0; i < old_view.columns.size(); ++i) {
    const auto& before = old_view.columns[i];
    if (before.name != columns[i].name)
      throw std::move(Error(SqlState::invalid_table_definition,
                            "cannot change name of view column \"" + before.name + "\" to \"" + columns[i].name + "\"")
                          .with_hint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."));
    if (before.type.id != columns[i].type.id || before.type.typmod != columns[i].type.typmod)
      throw Error(SqlState::invalid_table_definition, "cannot change data type of view column \"" + before.name + "\"");
  }
}

// The views that read `oids`, directly or through other views, each after
// what it reads ("view v depends on table t" lines for the message).
std::vector<catalog::ViewDef> dependents_of(const std::vector<uint32_t>& oids, const StatementContext& ctx,
                                            std::vector<std::string>& lines) {
  std::vector<catalog::ViewDef> out;
  std::set<uint32_t> seen(oids.begin(), oids.end());
  std::vector<std::pair<uint32_t, std::string>> work;
  const auto views = ctx.views->list();
  for (const uint32_t oid : oids) {
    auto table = ctx.store.catalog().find_table(oid);
    auto view = std::find_if(views.begin(), views.end(), [&](const catalog::ViewDef& v) { return v.oid == oid; });
    work.emplace_back(oid, table ? "table " + table->def.name : view != views.end() ? "view " + view->name : "");
  }
  for (size_t i = 0; i < work.size(); ++i) {
    for (auto& v : ctx.views->dependents(work[i].first)) {
      if (!seen.insert(v.oid).second) continue;
      lines.push_back("view " + v.name + " depends on " + work[i].second);
      work.emplace_back(v.oid, "view " + v.name);
      out.push_back(std::move(v));
    }
  }
  return out;
}

void drop_cascade(const std::vector<uint32_t>& oids, const std::vector<std::string>& names, const nlohmann::json& stmt,
                  StatementContext& ctx) {
  std::vector<std::string> lines;
  auto dependents = dependents_of(oids, ctx, lines);
  std::erase_if(dependents, [&](const catalog::ViewDef& v) { return std::count(oids.begin(), oids.end(), v.oid) > 0; });
  if (dependents.empty()) return;
  std::string detail;
  for (const auto& l : lines) detail += (detail.empty() ? "" : "\n") + l;
  if (stmt.value("behavior", std::string()) != "DROP_CASCADE") {
    const std::string message = names.size() == 1
                                    ? "cannot drop " + names.front() + " because other objects depend on it"
                                    : "cannot drop desired object(s) because other objects depend on them";
    throw std::move(Error(SqlState::dependent_objects_still_exist, message)
                        .with_detail(detail)
                        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
  }
  drop_with_notice(dependents, ctx);
}

// Whether a view's query (parse tree) may read column `column`: a column
// reference ending in that name, or a `*`. A reference to a same-named column
// of another relation counts too: the answer errs toward PostgreSQL's 2BP01.
bool may_read_column(const nlohmann::json& node, const std::string& column) {
  if (node.is_object()) {
    if (auto ref = node.find("ColumnRef"); ref != node.end() && ref->contains("fields")) {
      const auto& last = ref->at("fields").back();
      if (last.contains("A_Star")) return true;
      if (last.contains("String") && last["String"].value("sval", std::string()) == column) return true;
    }
    for (const auto& [key, value] : node.items())
      if (may_read_column(value, column)) return true;
  } else if (node.is_array()) {
    for (const auto& value : node)
      if (may_read_column(value, column)) return true;
  }
  return false;
}

}  // namespace

bool view_reads_column(const catalog::TableDef& table, const std::string& column, const StatementContext& ctx) {
  if (!ctx.views) return false;
  for (const auto& v : ctx.views->dependents(table.oid))
    if (may_read_column(nlohmann::json::parse(v.query), column)) return true;
  return false;
}

std::vector<catalog::ViewDef> column_dependents(const catalog::TableDef& table, const std::string& column,
                                                bool cascade, StatementContext& ctx) {
  if (!ctx.views) return {};
  std::vector<uint32_t> direct;
  std::vector<std::string> lines;
  for (const auto& v : ctx.views->dependents(table.oid)) {
    if (!may_read_column(nlohmann::json::parse(v.query), column)) continue;
    direct.push_back(v.oid);
    lines.push_back("view " + v.name + " depends on column " + column + " of table " + table.name);
  }
  if (direct.empty()) return {};
  std::vector<catalog::ViewDef> out;
  for (const uint32_t oid : direct) {
    for (const auto& v : ctx.views->list())
      if (v.oid == oid) out.push_back(v);
  }
  auto over = dependents_of(direct, ctx, lines);
  std::erase_if(over, [&](const catalog::ViewDef& v) { return std::count(direct.begin(), direct.end(), v.oid) > 0; });
  out.insert(out.end(), over.begin(), over.end());
  if (!cascade) {
    std::string detail;
    for (const auto& l : lines) detail += (detail.empty() ? "" : "\n") + l;
    throw std::move(Error(SqlState::dependent_objects_still_exist,
                          "cannot drop column " + column + " of table " + table.name +
                              " because other objects depend on it")
                        .with_detail(detail)
                        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
  }
  views_of(ctx, "DROP COLUMN ... CASCADE of views");
  return out;
}

void drop_with_notice(const std::vector<catalog::ViewDef>& dependents, StatementContext& ctx) {
  if (dependents.empty()) return;
  views_of(ctx, "DROP ... CASCADE of views");
  if (dependents.size() == 1) {
    ctx.out.notice(Error(SqlState::successful_completion, "drop cascades to view " + dependents.front().name,
                         Severity::notice));
  } else {
    std::string cascades;
    for (const auto& v : dependents) cascades += (cascades.empty() ? "" : "\n") + ("drop cascades to view " + v.name);
    ctx.out.notice(Error(SqlState::successful_completion,
                         "drop cascades to " + std::to_string(dependents.size()) + " other objects", Severity::notice)
                       .with_detail(cascades));
  }
  for (auto it = dependents.rbegin(); it != dependents.rend(); ++it) ctx.views->drop(it->oid);
}

std::string create_view(const nlohmann::json& stmt, StatementContext& ctx, const DescribeSelect& describe,
                        size_t statement_end) {
  catalog::ViewStore& views = views_of(ctx, "CREATE VIEW");
  const auto& rel = stmt.at("view").contains("RangeVar") ? stmt.at("view").at("RangeVar") : stmt.at("view");
  const std::string name = relation_name(rel);
  const std::string schema = rel.value("schemaname", std::string("public"));
  if (schema != "public") throw Error(SqlState::invalid_schema_name, "schema \"" + schema + "\" does not exist");
  if (rel.value("relpersistence", std::string("p")) != "p")
    throw Error(SqlState::feature_not_supported, "temporary views are not supported by Tally");
  if (!stmt.at("query").contains("SelectStmt"))
    throw Error(SqlState::feature_not_supported, "this view query is not supported by Tally");
  if (stmt.contains("options") || stmt.value("withCheckOption", std::string("NO_CHECK_OPTION")) != "NO_CHECK_OPTION")
    throw Error(SqlState::feature_not_supported, "view options and WITH CHECK OPTION are not supported by Tally");
  const nlohmann::json& select = stmt["query"]["SelectStmt"];
  const bool replace = stmt.value("replace", false);
  auto existing = views.find(name);
  if (!existing && (relation_name_taken(ctx, name, nullptr) || sequence_exists(ctx, name))) {
    if (replace && ctx.find_table(name)) throw Error(SqlState::wrong_object_type, "\"" + name + "\" is not a view");
    throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
  }
  if (existing && !replace) throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");

  const std::vector<uint32_t> depends = dependencies(select, ctx);
  std::vector<catalog::ViewColumn> columns = describe(select);
  const auto aliases = stmt.value("aliases", nlohmann::json::array());
  if (aliases.size() > columns.size())
    throw Error(SqlState::syntax_error, "CREATE VIEW specifies more column names than columns");
  for (size_t i = 0; i < aliases.size(); ++i) columns[i].name = aliases[i]["String"].value("sval", columns[i].name);
  std::set<std::string> seen;
  for (auto& c : columns) {
    if (!seen.insert(c.name).second)
      throw Error(SqlState::duplicate_column, "column \"" + c.name + "\" specified more than once");
    if (c.name.find('\n') != std::string::npos)
      throw Error(SqlState::feature_not_supported, "a view column name with a newline is not supported by Tally");
    if (c.type.id == TypeId::unknown) c.type = {TypeId::text};  // PostgreSQL 15 resolves unknown outputs to text
  }
  catalog::ViewDef def;
  def.name = name;
  def.schema = schema;
  def.query = select.dump();
  def.definition = definition_text(ctx.query_text, static_cast<size_t>(std::max(0, rel.value("location", 0))),
                                   statement_end);
  // PostgreSQL shows the query as it deparses its stored tree; Tally for the
  // simple views view_deparse.hpp prints, and as written otherwise.
  if (depends.size() == 1) {
    if (const auto table = ctx.store.catalog().find_table(depends.front()))
      if (auto printed = deparse_view(select, table->def, columns)) def.definition = std::move(*printed);
  }
  def.columns = std::move(columns);
  def.depends = depends;
  if (existing) {
    check_replacement(*existing, def.columns);
    if (reaches(def.depends, existing->oid, views))
      throw Error(SqlState::invalid_recursion, "infinite recursion detected in rules for relation \"" + name + "\"");
    def.oid = existing->oid;
  }
  views.put(std::move(def));
  return "CREATE VIEW";
}

std::string drop_views(const nlohmann::json& stmt, StatementContext& ctx) {
  const bool missing_ok = stmt.value("missing_ok", false);
  std::vector<uint32_t> oids;
  std::vector<std::string> names;
  for (const auto& obj : stmt.at("objects")) {
    std::vector<std::string> parts;
    for (const auto& it : obj.at("List").at("items")) parts.push_back(it.at("String").value("sval", std::string()));
    const std::string& name = parts.back();
    const bool public_schema = parts.size() < 2 || parts[parts.size() - 2] == "public";
    auto view = ctx.views && public_schema ? ctx.views->find(name) : std::nullopt;
    if (!view) {
      if (public_schema && ctx.find_table(name))
        throw std::move(Error(SqlState::wrong_object_type, "\"" + name + "\" is not a view")
                            .with_hint("Use DROP TABLE to remove a table."));
      if (missing_ok) {
        ctx.out.notice(
            Error(SqlState::successful_completion, "view \"" + name + "\" does not exist, skipping", Severity::notice));
        continue;
      }
      throw Error(SqlState::undefined_table, "view \"" + name + "\" does not exist");
    }
    oids.push_back(view->oid);
    names.push_back("view " + name);
  }
  if (oids.empty()) return "DROP VIEW";
  catalog::ViewStore& views = views_of(ctx, "DROP VIEW");
  drop_cascade(oids, names, stmt, ctx);
  for (const uint32_t oid : oids) views.drop(oid);
  return "DROP VIEW";
}

void drop_dependent_views(const std::vector<uint32_t>& oids, const nlohmann::json& stmt, StatementContext& ctx) {
  if (!ctx.views) return;
  std::vector<std::string> names;
  for (const uint32_t oid : oids) {
    auto table = ctx.store.catalog().find_table(oid);
    names.push_back("table " + (table ? table->def.name : std::to_string(oid)));
  }
  drop_cascade(oids, names, stmt, ctx);
}

}  // namespace tally::executor::ddl
