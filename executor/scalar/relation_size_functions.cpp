#include "executor/scalar/relation_size_functions.hpp"

#include <cctype>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

namespace {

constexpr uint64_t kPageBytes = 8192;

std::string last_name(const nlohmann::json& names) {
  if (!names.is_array() || names.empty()) return {};
  const auto& last = names.back();
  return last.contains("String") ? last["String"].value("sval", std::string()) : std::string();
}

// The text of a string literal, bare or cast to regclass; nullopt otherwise.
std::optional<std::string> regclass_literal(const nlohmann::json& arg) {
  const nlohmann::json* konst = nullptr;
  if (arg.contains("A_Const")) {
    konst = &arg["A_Const"];
  } else if (arg.contains("TypeCast")) {
    const auto& cast = arg["TypeCast"];
    if (last_name(cast["typeName"].value("names", nlohmann::json::array())) != "regclass") return std::nullopt;
    if (!cast["arg"].contains("A_Const")) return std::nullopt;
    konst = &cast["arg"]["A_Const"];
  }
  if (konst == nullptr || !konst->contains("sval")) return std::nullopt;
  return (*konst)["sval"].value("sval", std::string());
}

// A qualified name as regclass's input reads it: dot-separated identifiers,
// folded to lower case unless double-quoted.
std::vector<std::string> split_qualified_name(const std::string& text) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      if (quoted && i + 1 < text.size() && text[i + 1] == '"') {
        parts.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == '.' && !quoted) {
      parts.emplace_back();
    } else {
      parts.back() += quoted ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return parts;
}

}  // namespace

uint64_t relation_bytes(const TableSnapshot& table) {
  uint64_t row_bytes = 0;
  for (const auto& column : table.columns()) {
    const int16_t len = type_len(column.type.id);
    row_bytes += len > 0 ? static_cast<uint64_t>(len) : 4;  // variable width: its dictionary code
  }
  const uint64_t bytes = table.row_count() * row_bytes;
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

std::shared_ptr<const TableSnapshot> find_regclass_literal(const nlohmann::json& arg, TableProvider& tables) {
  const auto literal = regclass_literal(arg);
  if (!literal) return nullptr;
  const std::vector<std::string> parts = split_qualified_name(*literal);
  if (parts.size() > 2) return nullptr;
  const std::string schema = parts.size() == 2 ? parts[0] : std::string();
  auto table = tables.find_table(schema, parts.back());
  if (!table) throw Error(SqlState::undefined_table, "relation \"" + *literal + "\" does not exist");
  return table;
}

ExprPtr bind_relation_size_call(const nlohmann::json& node, TableProvider& tables) {
  if (!node.contains("FuncCall")) return nullptr;
  const auto& call = node["FuncCall"];
  const std::string name = last_name(call.value("funcname", nlohmann::json::array()));
  const bool indexes = name == "pg_indexes_size";
  if (name != "pg_relation_size" && name != "pg_table_size" && name != "pg_total_relation_size" && !indexes) {
    return nullptr;
  }
  const auto args = call.value("args", nlohmann::json::array());
  // pg_relation_size(rel, fork): only the main fork holds data here.
  const bool fork_main = args.size() == 2 && name == "pg_relation_size" && args[1].contains("A_Const") &&
                         args[1]["A_Const"].contains("sval") &&
                         args[1]["A_Const"]["sval"].value("sval", std::string()) == "main";
  if (args.size() != 1 && !fork_main) return nullptr;
  const auto table = find_regclass_literal(args[0], tables);
  if (!table) return nullptr;
  const int64_t bytes = indexes ? 0 : static_cast<int64_t>(relation_bytes(*table));
  return std::make_unique<ConstExpr>(SqlType{TypeId::int8}, bytes);
}

}  // namespace tally::executor
