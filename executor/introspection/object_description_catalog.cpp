#include "executor/introspection/object_description_catalog.hpp"

#include "executor/function_catalog.hpp"
#include "executor/introspection/sequence_relations.hpp"
#include "executor/introspection/view_relations.hpp"
#include "executor/reg_names.hpp"
#include "executor/scalar/catalog_functions.hpp"

namespace tally::executor::introspection {
namespace {

constexpr int64_t kPgClass = 1259, kPgProc = 1255, kPgType = 1247, kPgNamespace = 2615, kPgLanguage = 2612,
                  kPgAm = 2601, kPgExtension = 3079, kPgConstraint = 2606, kPgAttrdef = 2604, kPgRewrite = 2618;

size_t column_index(const Relation& r, std::string_view name) {
  for (size_t i = 0; i < r.columns.size(); ++i) {
    if (r.columns[i].name == name) return i;
  }
  return r.columns.size();
}

// The row of `r` whose oid column holds `oid`; null when none.
const std::vector<Value>* row_with_oid(const Relation& r, int64_t oid) {
  const size_t at = column_index(r, "oid");
  for (const auto& row : r.rows) {
    if (at < row.size() && std::holds_alternative<int64_t>(row[at]) && std::get<int64_t>(row[at]) == oid) return &row;
  }
  return nullptr;
}

std::string text_of(const Relation& r, const std::vector<Value>& row, std::string_view column) {
  const Value& v = row[column_index(r, column)];
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::string();
}

// The name column of a built-in object's catalog row ("language plpgsql").
std::optional<std::string> named_object(const CatalogSource& source, const char* catalog, const char* name_column,
                                        const char* word, int64_t objid) {
  const auto r = build_relation("pg_catalog", catalog, source);
  if (!r) return std::nullopt;
  const auto* row = row_with_oid(*r, objid);
  if (row == nullptr) return std::nullopt;
  return std::string(word) + " " + scalar::quote_ident(text_of(*r, *row, name_column));
}

const char* relation_kind_word(char relkind) {
  switch (relkind) {
    case 'r': return "table";
    case 'i': return "index";
    case 'S': return "sequence";
    case 'v': return "view";
    case 'm': return "materialized view";
    case 'c': return "composite type";
    case 'f': return "foreign table";
    case 'p': return "partitioned table";
    case 'I': return "partitioned index";
    default: return "relation";
  }
}

// "table t", schema-qualified where the default search path (pg_catalog,
// public) does not reach it, as getRelationDescription writes it.
std::optional<std::string> relation_description(const CatalogSource& source, int64_t oid) {
  const auto pg_class = build_relation("pg_catalog", "pg_class", source);
  const auto* row = row_with_oid(*pg_class, oid);
  if (row == nullptr) return std::nullopt;
  const std::string kind = text_of(*pg_class, *row, "relkind");
  const int64_t schema = std::get<int64_t>((*row)[column_index(*pg_class, "relnamespace")]);
  std::string name = scalar::quote_ident(text_of(*pg_class, *row, "relname"));
  if (schema != kPgCatalogOid && schema != kPublicOid) {
    name = scalar::quote_ident(namespace_name(schema).value_or("")) + "." + name;
  }
  return std::string(relation_kind_word(kind.empty() ? '\0' : kind[0])) + " " + name;
}

std::optional<std::string> column_description(const CatalogSource& source, int64_t relation, int64_t attnum) {
  const auto of = relation_description(source, relation);
  if (!of) return std::nullopt;
  const auto pg_attribute = build_relation("pg_catalog", "pg_attribute", source);
  const size_t relid = column_index(*pg_attribute, "attrelid"), num = column_index(*pg_attribute, "attnum");
  for (const auto& row : pg_attribute->rows) {
    if (std::get<int64_t>(row[relid]) == relation && std::get<int64_t>(row[num]) == attnum) {
      return "column " + scalar::quote_ident(text_of(*pg_attribute, row, "attname")) + " of " + *of;
    }
  }
  return std::nullopt;
}

// format_procedure, as regprocedure prints it: "lower(text)".
std::optional<std::string> function_description(int64_t oid) {
  if (supported_function(static_cast<uint32_t>(oid)) == nullptr && !language_handler_signature(oid)) return std::nullopt;
  return "function " + reg_output(TypeId::regprocedure, oid);
}

std::optional<std::string> constraint_description(const CatalogSource& source, int64_t oid) {
  for (const auto& t : source.tables) {
    for (const auto& key : t.keys) {
      if (key.constraint && key.oid == oid) {
        return "constraint " + scalar::quote_ident(key.name) + " on " + relation_description(source, t.oid).value_or("");
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> default_description(const CatalogSource& source, int64_t oid) {
  for (const auto& t : source.tables) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (!t.columns[c].default_expr.empty() && !t.columns[c].identity && attrdef_oid(t.oid, c) == oid) {
        return "default value for " + column_description(source, t.oid, static_cast<int64_t>(c + 1)).value_or("");
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> rule_description(const CatalogSource& source, int64_t oid) {
  for (const auto& v : source.views) {
    if (view_rule_oid(v.oid) == oid) return "rule _RETURN on " + relation_description(source, v.oid).value_or("");
  }
  return std::nullopt;
}

class CatalogObjectDescriptions final : public ObjectDescriptions {
 public:
  explicit CatalogObjectDescriptions(std::function<CatalogSource()> source) : source_(std::move(source)) {}

  std::optional<std::string> describe(int64_t classid, int64_t objid, int64_t subid) const override {
    return describe_object(source_(), classid, objid, subid);
  }

 private:
  std::function<CatalogSource()> source_;
};

}  // namespace

std::optional<std::string> describe_object(const CatalogSource& source, int64_t classid, int64_t objid,
                                           int64_t subid) {
  switch (classid) {
    case kPgClass:
      return subid != 0 ? column_description(source, objid, subid) : relation_description(source, objid);
    case kPgProc: return function_description(objid);
    case kPgType:
      if (!type_name_of(static_cast<uint32_t>(objid))) return std::nullopt;
      return "type " + reg_output(TypeId::regtype, objid);
    case kPgNamespace: {
      const auto name = namespace_name(objid);
      if (!name) return std::nullopt;
      return "schema " + scalar::quote_ident(*name);
    }
    case kPgLanguage: return named_object(source, "pg_language", "lanname", "language", objid);
    case kPgAm: return named_object(source, "pg_am", "amname", "access method", objid);
    case kPgExtension: return named_object(source, "pg_extension", "extname", "extension", objid);
    case kPgConstraint: return constraint_description(source, objid);
    case kPgAttrdef: return default_description(source, objid);
    case kPgRewrite: return rule_description(source, objid);
    default: return std::nullopt;
  }
}

std::shared_ptr<const ObjectDescriptions> catalog_object_descriptions(std::function<CatalogSource()> source) {
  return std::make_shared<CatalogObjectDescriptions>(std::move(source));
}

}  // namespace tally::executor::introspection
