#include "executor/introspection/reg_name_catalog.hpp"

#include <array>
#include <functional>
#include <sstream>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "common/error.hpp"
#include "catalog/sequence_store.hpp"
#include "catalog/view_store.hpp"
#include "executor/database.hpp"
#include "executor/function_catalog.hpp"
#include "executor/operator_catalog.hpp"
#include "executor/reg_names.hpp"
#include "executor/introspection/catalog_relations.hpp"
#include "storage/table_store.hpp"

namespace tally::executor::introspection {
namespace {

// Type names as SQL writes them, which regtype also reads.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kTypeAliases{{
    {"int", "int4"}, {"integer", "int4"}, {"smallint", "int2"}, {"bigint", "int8"}, {"real", "float4"},
    {"double precision", "float8"}}};

using RelationVisitor = std::function<void(int64_t oid, const std::string& name)>;
using RelationLister = std::function<void(const RelationVisitor&)>;

class CatalogRegNames final : public RegNames {
 public:
  explicit CatalogRegNames(RelationLister relations) : relations_(std::move(relations)) {}

  std::optional<std::string> name_of(TypeId type, int64_t oid) const override {
    if (type == TypeId::regclass) return relation_name(oid);
    if (type == TypeId::regnamespace) return namespace_name(oid);
    // pg_proc's functions, pg_operator's functions and the types' I/O functions have names; regoper OIDs print as numbers.
    if (type == TypeId::regproc) {
      if (const PostgresFunction* f = supported_function(static_cast<uint32_t>(oid))) return std::string(f->regproc);
      if (const PostgresOperator* o = operator_with_code(static_cast<uint32_t>(oid))) return std::string(o->code_name);
      return type_function_name(oid);
    }
    if (type == TypeId::regoper) return std::nullopt;
    if (type == TypeId::regoperator) return operator_signature(oid);
    if (type == TypeId::regprocedure) {
      if (auto name = procedure_name(oid)) return name;
      return language_handler_signature(oid);
    }
    // regtype prints format_type's name without a modifier.
    if (auto id = type_from_oid(static_cast<uint32_t>(oid))) return format_type(SqlType{*id});
    // format_type quotes a name that is a keyword: of pg_type's names, "any".
    auto name = type_name_of(static_cast<uint32_t>(oid));
    if (name && *name == "any") return "\"any\"";
    return name;
  }

  std::optional<int64_t> oid_of(TypeId type, std::string_view name) const override {
    if (type == TypeId::regclass) return relation_oid(name);
    if (type == TypeId::regnamespace) return namespace_oid(name);
    if (type == TypeId::regproc) return function_oid(name);
    if (type == TypeId::regprocedure) return procedure_oid(name);
    if (type == TypeId::regoperator) return operator_oid(name);
    if (type == TypeId::regoper) return std::nullopt;
    for (const auto& [alias, typname] : kTypeAliases) {
      if (name == alias) name = typname;
    }
    if (auto oid = type_oid_by_name(name)) return *oid;
    for (uint32_t oid = 0; oid < 5000; ++oid) {
      auto id = type_from_oid(oid);
      if (id && *id != TypeId::unknown && format_type(SqlType{*id}) == name) return oid;
    }
    return std::nullopt;
  }

 private:
  // regprocedure output: the name (schema-qualified where it is overloaded,
  // as regproc prints it) and the argument types, comma-separated.
  static std::optional<std::string> procedure_name(int64_t oid) {
    const PostgresFunction* f = supported_function(static_cast<uint32_t>(oid));
    if (f == nullptr) return std::nullopt;
    std::string name = f->regproc;
    if (name.starts_with("pg_catalog.")) name.erase(0, std::string_view("pg_catalog.").size());
    std::string types;
    std::istringstream in(f->argtypes);
    int64_t type = 0;
    while (in >> type) types += (types.empty() ? "" : ",") + reg_output(TypeId::regtype, type);
    return name + "(" + types + ")";
  }

  // regoperator output: the name and its operand types, NONE for a prefix
  // operator's missing left one (PostgreSQL's format_operator).
  static std::optional<std::string> operator_signature(int64_t oid) {
    const PostgresOperator* o = supported_operator(static_cast<uint32_t>(oid));
    if (o == nullptr) return std::nullopt;
    const std::string left = o->left == 0 ? "NONE" : reg_output(TypeId::regtype, o->left);
    return std::string(o->name) + "(" + left + "," + reg_output(TypeId::regtype, o->right) + ")";
  }

  // regoperator input: "name(left, right)", NONE for a prefix operator's left.
  static std::optional<int64_t> operator_oid(std::string_view text) {
    const size_t open = text.find('('), comma = text.find(',', open), close = text.rfind(')');
    if (open == std::string_view::npos || comma == std::string_view::npos || close == std::string_view::npos ||
        close < comma) {
      throw Error(SqlState::invalid_text_representation, "expected a left parenthesis");
    }
    const std::string_view name = text.substr(0, open);
    const std::string_view left_text = text.substr(open + 1, comma - open - 1);
    std::string left_word;
    for (char c : left_text) {
      if (c != ' ') left_word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    const bool prefix = left_word == "none";
    const int64_t left = prefix ? 0 : reg_input(TypeId::regtype, left_text);
    const int64_t right = reg_input(TypeId::regtype, text.substr(comma + 1, close - comma - 1));
    for (const PostgresOperator* o : supported_operators()) {
      if (name == o->name && o->left == left && o->right == right) return o->oid;
    }
    return std::nullopt;
  }

  // regprocedure input: "name(type, ...)", the name already folded; the
  // function pg_proc lists with exactly these argument types.
  static std::optional<int64_t> procedure_oid(std::string_view text) {
    const size_t open = text.find('('), close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      throw Error(SqlState::invalid_text_representation,
                  "expected a left parenthesis");
    }
    const std::string_view name = text.substr(0, open);
    std::vector<int64_t> types;
    std::string_view rest = text.substr(open + 1, close - open - 1);
    while (rest.find_first_not_of(' ') != std::string_view::npos) {
      const size_t comma = rest.find(',');
      types.push_back(reg_input(TypeId::regtype, rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    for (const PostgresFunction* f : supported_functions()) {
      if (name != f->name) continue;
      std::vector<int64_t> argtypes;
      std::istringstream in(f->argtypes);
      int64_t type = 0;
      while (in >> type) argtypes.push_back(type);
      if (argtypes == types) return f->oid;
    }
    return std::nullopt;
  }

  // regproc input: a function pg_proc lists under that name (PostgreSQL's
  // 42725 when it is overloaded), else an operator's function, a type I/O
  // function or an access method handler.
  static std::optional<int64_t> function_oid(std::string_view name) {
    std::optional<int64_t> found;
    for (const PostgresFunction* f : supported_functions()) {
      if (name != f->name) continue;
      if (found) throw Error(SqlState::ambiguous_function, "more than one function named \"" + std::string(name) + "\"");
      found = f->oid;
    }
    if (found) return found;
    for (const PostgresOperator* o : supported_operators()) {
      if (name == o->code_name) return o->code;
    }
    return type_function_oid(name);
  }

  // pg_catalog first, as PostgreSQL's search path reads it (pg_catalog is
  // searched before the user's schemas unless listed), then the user's relations.
  std::optional<int64_t> relation_oid(std::string_view name) const {
    if (auto oid = catalog_relation_oid(name)) return *oid;
    std::optional<int64_t> found;
    relations_([&](int64_t oid, const std::string& relation) {
      if (!found && relation == name) found = oid;
    });
    return found;
  }

  std::optional<std::string> relation_name(int64_t oid) const {
    if (auto name = catalog_relation_name(oid)) return name;
    std::optional<std::string> found;
    relations_([&](int64_t relation_oid, const std::string& relation) {
      if (!found && relation_oid == oid) found = relation;
    });
    return found;
  }

  RelationLister relations_;
};

}  // namespace

std::shared_ptr<const RegNames> catalog_reg_names(Database* database) {
  // Every user relation pg_class lists: tables, their key indexes, sequences, views.
  auto relations = [database](const RelationVisitor& visit) {
    if (database == nullptr) return;
    if (database->store() != nullptr) {
      for (const auto& table : database->store()->catalog().tables()) {
        visit(static_cast<int64_t>(table->def.oid), table->def.name);
        for (const auto& key : table->def.keys) {
          if (key.index_oid != 0) visit(static_cast<int64_t>(key.index_oid), key.name);
        }
      }
    }
    if (database->sequences() != nullptr) {
      for (const auto& s : database->sequences()->list()) visit(static_cast<int64_t>(s.oid), s.name);
    }
    if (database->views() != nullptr) {
      for (const auto& v : database->views()->list()) visit(static_cast<int64_t>(v.oid), v.name);
    }
  };
  return std::make_shared<CatalogRegNames>(std::move(relations));
}

std::shared_ptr<const RegNames> catalog_reg_names(const CatalogSource& source) {
  auto relations = [tables = source.tables, sequences = source.sequences,
                    views = source.views](const RelationVisitor& visit) {
    for (const auto& t : tables) {
      visit(t.oid, t.name);
      for (const auto& key : t.keys) {
        if (key.index_oid != 0) visit(key.index_oid, key.name);
      }
    }
    for (const auto& s : sequences) visit(s.oid, s.name);
    for (const auto& v : views) visit(v.oid, v.name);
  };
  return std::make_shared<CatalogRegNames>(std::move(relations));
}

}  // namespace tally::executor::introspection
