#include "executor/scalar/catalog_functions.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "catalog/catalog.hpp"
#include "executor/array_text.hpp"
#include "executor/scalar/acl_default.hpp"
#include "executor/scalar/builtin_comments.hpp"
#include "executor/scalar/function_definition.hpp"
#include "executor/ddl/session_sequences.hpp"
#include "executor/dml/column_default.hpp"
#include "executor/key_definitions.hpp"
#include "executor/object_descriptions.hpp"
#include "executor/operator_catalog.hpp"
#include "executor/reg_names.hpp"
#include "executor/function_catalog.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/settings.hpp"
#include "executor/value_codec.hpp"
#include "executor/view_definitions.hpp"

namespace tally::executor::scalar {

namespace {

// The initdb role (10) and the pg_database_owner role (6171), the only roles
// whose OIDs the catalog relations hold.
constexpr int64_t kBootstrapUserOid = 10;
constexpr int64_t kDatabaseOwnerOid = 6171;
// pg_class's own OID (the class of relations), and the first OID a user's
// object gets (PostgreSQL's FirstNormalObjectId).
constexpr int64_t kPgClassOid = 1259;
constexpr int64_t kFirstNormalOid = 16384;

// PostgreSQL's encodings by their numbers (pg_encoding_to_char).
constexpr std::array<const char*, 42> kEncodings{
    "SQL_ASCII",  "EUC_JP",     "EUC_CN",     "EUC_KR",     "EUC_TW",     "EUC_JIS_2004", "UTF8",
    "MULE_INTERNAL", "LATIN1",  "LATIN2",     "LATIN3",     "LATIN4",     "LATIN5",     "LATIN6",
    "LATIN7",     "LATIN8",     "LATIN9",     "LATIN10",    "WIN1256",    "WIN1258",    "WIN866",
    "WIN874",     "KOI8R",      "WIN1251",    "WIN1252",    "ISO_8859_5", "ISO_8859_6", "ISO_8859_7",
    "ISO_8859_8", "WIN1250",    "WIN1253",    "WIN1254",    "WIN1255",    "WIN1257",    "KOI8U",
    "SJIS",       "BIG5",       "GBK",        "UHC",        "GB18030",    "JOHAB",      "SHIFT_JIS_2004"};

// An argument that is an OID: integer-valued types pass as they are, an
// untyped literal becomes oid.
ExprPtr oid_argument(ExprPtr e, BindContext& context) {
  if (e->type.id == TypeId::unknown || physical_of(e->type.id) != Physical::integer) {
    return to_type(std::move(e), TypeId::oid, context);
  }
  return e;
}

// format_type's name of a type Tally has no TypeId for (rows of pg_type).
std::string other_type_name(int64_t type_oid) {
  switch (type_oid) {
    case 0: return "-";  // InvalidOid, as a prefix operator's oprleft
    case 17: return "bytea";
    case oid::regproc: return "regproc";
    case 1007: return "integer[]";
    default: return "???";
  }
}

}  // namespace

namespace {

// Whether the search path reaches public (PostgreSQL prints the relations it
// does not reach schema-qualified).
bool public_on_search_path(const Settings* settings) {
  const auto path = current_schemas(false, settings);
  return std::find(path.begin(), path.end(), "public") != path.end();
}

}  // namespace

// Unquoted only for a lower-case identifier.
std::string quote_ident(const std::string& s) {
  const bool plain = !s.empty() && (std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
                     std::all_of(s.begin(), s.end(), [](unsigned char c) {
                       return std::islower(c) || std::isdigit(c) || c == '_';
                     });
  if (plain) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

namespace {

// PostgreSQL 15's pg_size_pretty(bigint): bytes below 10 kB, then the
// largest unit (kB .. PB) that keeps the half-rounded value below 20480.
std::string size_pretty(int64_t size) {
  constexpr int64_t kLimit = 10 * 1024, kLimit2 = kLimit * 2 - 1;
  auto half_rounded = [](int64_t x) { return (x + (x < 0 ? -1 : 1)) / 2; };
  if (std::llabs(size) < kLimit) return std::to_string(size) + " bytes";
  size >>= 9;  // one extra bit for rounding
  for (const char* unit : {"kB", "MB", "GB", "TB"}) {
    if (std::llabs(size) < kLimit2) return std::to_string(half_rounded(size)) + " " + unit;
    size >>= 10;
  }
  return std::to_string(half_rounded(size)) + " PB";
}

// pg_size_pretty(numeric) (a sum of sizes): below 10 kB the value as it
// prints, with " bytes"; above, the units of the bigint form over its
// integer part (PostgreSQL divides it with truncation).
std::string size_pretty_numeric(const std::string& text) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = text.substr(negative ? 1 : 0, text.find('.') == std::string::npos
                                                              ? std::string::npos
                                                              : text.find('.') - (negative ? 1 : 0));
  if (digits.size() < 5 || (digits.size() == 5 && digits < "10240")) return text + " bytes";
  if (digits.size() > 18) throw Error(SqlState::numeric_value_out_of_range, "bigint out of range");
  const int64_t whole = std::stoll(digits);
  return size_pretty(negative ? -whole : whole);
}

// pg_get_serial_sequence(table, column): the schema-qualified name of the
// sequence the column owns (serial, identity), NULL when it owns none. The
// table name reads as regclass reads it; the column name is taken literally.
Value serial_sequence(SessionSequences* sequences, const std::string& table, const std::string& column) {
  const int64_t table_oid = reg_input(TypeId::regclass, table);
  if (sequences == nullptr) return Null{};
  catalog::Catalog& catalog = sequences->store().catalog();
  const auto snapshot = catalog.find_table(static_cast<uint32_t>(table_oid));
  if (snapshot == nullptr) return Null{};  // a catalog relation: it owns no sequences
  const auto& columns = snapshot->def.columns;
  const auto found = std::find_if(columns.begin(), columns.end(), [&](const auto& c) { return c.name == column; });
  if (found == columns.end()) {
    throw Error(SqlState::undefined_column,
                "column \"" + column + "\" of relation \"" + snapshot->def.name + "\" does not exist");
  }
  const int index = static_cast<int>(found - columns.begin());
  for (const auto& s : sequences->store().list()) {
    if (s.owner_table == table_oid && s.owner_column == index) return quote_ident(s.schema) + "." + quote_ident(s.name);
  }
  return Null{};
}

// A value as json_build_object writes it: numbers and booleans bare, text
// as a JSON string, NULL as null.
void append_json(std::string& out, const Value& v) {
  if (is_null(v)) {
    out += "null";
  } else if (std::holds_alternative<bool>(v)) {
    out += std::get<bool>(v) ? "true" : "false";
  } else if (std::holds_alternative<int64_t>(v)) {
    out += std::to_string(std::get<int64_t>(v));
  } else {
    out += '"';
    for (const char c : std::get<std::string>(v)) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else out += c;
    }
    out += '"';
  }
}

}  // namespace

std::vector<std::string> current_schemas(bool include_implicit, const Settings* settings) {
  std::string path = settings ? settings->get("search_path").value_or("") : "\"$user\", public";
  std::vector<std::string> listed;
  std::string item;
  auto flush = [&] {
    const size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    std::string name = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    if (name == "public" || name == "pg_catalog" || name == "information_schema") listed.push_back(name);
    item.clear();
  };
  for (char c : path) {
    if (c == ',') flush(); else item.push_back(c);
  }
  flush();
  std::vector<std::string> out;
  if (include_implicit && std::find(listed.begin(), listed.end(), "pg_catalog") == listed.end()) {
    out.push_back("pg_catalog");
  }
  out.insert(out.end(), listed.begin(), listed.end());
  return out;
}

ExprPtr make_catalog_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  if (name == "format_type" && n == 2) {
    args[0] = oid_argument(std::move(args[0]), context);
    args[1] = to_type(std::move(args[1]), TypeId::int4, context);
    // Non-strict: a NULL type modifier means none.
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      if (is_null(a[0])) return Null{};
      const int32_t typmod = is_null(a[1]) ? -1 : static_cast<int32_t>(std::get<int64_t>(a[1]));
      const int64_t type = std::get<int64_t>(a[0]);
      if (auto id = type_from_oid(static_cast<uint32_t>(type))) return format_type(SqlType{*id, typmod});
      return other_type_name(type);
    }, false);
  }
  if (name == "pg_table_is_visible" && n == 1) {
    // A relation is visible when its schema is on the search path: user
    // relations (OIDs from 16384, PostgreSQL's first normal OID) live in
    // public, the system ones in pg_catalog (always searched) or
    // information_schema, whose regclass output is schema-qualified.
    args[0] = oid_argument(std::move(args[0]), context);
    const Settings* settings = context.settings;
    return call({TypeId::boolean}, name, std::move(args), [settings](std::span<const Value> a) -> Value {
      const int64_t oid = std::get<int64_t>(a[0]);
      const auto path = current_schemas(true, settings);
      const auto on_path = [&](const char* schema) { return std::find(path.begin(), path.end(), schema) != path.end(); };
      if (oid >= kFirstNormalOid) return on_path("public");
      if (reg_output(TypeId::regclass, oid).starts_with("information_schema.")) return on_path("information_schema");
      return true;
    });
  }
  if (((name == "pg_type_is_visible" || name == "pg_function_is_visible" || name == "pg_operator_is_visible" ||
        name == "pg_opclass_is_visible" || name == "pg_opfamily_is_visible" || name == "pg_collation_is_visible" ||
        name == "pg_conversion_is_visible" || name == "pg_statistics_obj_is_visible" ||
        name == "pg_ts_parser_is_visible" || name == "pg_ts_dict_is_visible" ||
        name == "pg_ts_template_is_visible" || name == "pg_ts_config_is_visible") && n == 1) ||
      ((name == "has_table_privilege" || name == "has_schema_privilege" || name == "has_database_privilege" ||
        name == "pg_has_role") &&
       (n == 2 || n == 3)) ||
      (name == "has_column_privilege" && (n == 3 || n == 4))) {
    // The types, functions and operator classes Tally lists are all in
    // pg_catalog, which every search path reaches; every user may read
    // everything, and holds every role's privileges as a superuser does
    // (pg_has_role: psql's \l+ asks it before it sizes a database).
    for (auto& a : args) {
      if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
    }
    return call({TypeId::boolean}, name, std::move(args), [](std::span<const Value>) -> Value { return true; });
  }
  if (name == "pg_get_userbyid" && n == 1) {
    args[0] = oid_argument(std::move(args[0]), context);
    const std::string user = context.session_user;
    return call({TypeId::name}, name, std::move(args), [user](std::span<const Value> a) -> Value {
      const int64_t id = std::get<int64_t>(a[0]);
      if (id == kBootstrapUserOid) return user;
      if (id == kDatabaseOwnerOid) return std::string("pg_database_owner");
      return "unknown (OID=" + std::to_string(id) + ")";
    });
  }
  if (name == "acldefault" && n == 2) {
    // aclitem[] in PostgreSQL; text[] here, in the same text form.
    args[0] = to_type(std::move(args[0]), TypeId::char_, context);
    args[1] = oid_argument(std::move(args[1]), context);
    const std::string user = context.session_user;
    return call({TypeId::text_array}, name, std::move(args), [user](std::span<const Value> a) -> Value {
      const std::string& objtype = std::get<std::string>(a[0]);
      const int64_t id = std::get<int64_t>(a[1]);
      // Roles print by name; one the catalog does not hold, by its number.
      const std::string owner = id == kBootstrapUserOid ? user
                                : id == kDatabaseOwnerOid ? std::string("pg_database_owner")
                                                          : std::to_string(id);
      const auto items = acl_default(objtype.empty() ? '\0' : objtype[0], owner);
      if (!items) throw Error(SqlState::internal_error, "unrecognized objtype abbreviation: " + objtype);
      std::vector<std::optional<std::string>> elements(items->begin(), items->end());
      return array_literal(elements);
    });
  }
  if (name == "pg_encoding_to_char" && n == 1) {
    args[0] = to_type(std::move(args[0]), TypeId::int4, context);
    return call({TypeId::name}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const int64_t id = std::get<int64_t>(a[0]);
      return std::string(id >= 0 && id < static_cast<int64_t>(kEncodings.size()) ? kEncodings[id] : "");
    });
  }
  if (name == "pg_char_to_encoding" && n == 1) {
    // PostgreSQL compares the name without case and without its
    // punctuation ("utf-8" is UTF8), and reads "unicode" as UTF8 too.
    args[0] = to_type(std::move(args[0]), TypeId::name, context);
    return call({TypeId::int4}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const auto clean = [](std::string_view text) {
        std::string out;
        for (unsigned char c : text) {
          if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
        }
        return out;
      };
      const std::string wanted = clean(std::get<std::string>(a[0]));
      if (wanted == "unicode") return int64_t{6};
      for (size_t id = 0; id < kEncodings.size(); ++id) {
        if (!wanted.empty() && clean(kEncodings[id]) == wanted) return static_cast<int64_t>(id);
      }
      return int64_t{-1};
    });
  }
  if (name == "getdatabaseencoding" && n == 0) {
    return call({TypeId::name}, name, std::move(args), [](std::span<const Value>) -> Value { return std::string("UTF8"); });
  }
  if (name == "pg_relation_is_publishable" && n == 1) {
    // A user table is; a view, a sequence or a system relation is not; an
    // OID no relation has gives NULL, as in PostgreSQL. Its argument is regclass.
    if (args[0]->type.id == TypeId::unknown) args[0] = to_type(std::move(args[0]), TypeId::regclass, context);
    args[0] = oid_argument(std::move(args[0]), context);
    return call({TypeId::boolean}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const auto descriptions = object_descriptions();
      const int64_t oid = std::get<int64_t>(a[0]);
      auto text = descriptions ? descriptions->describe(kPgClassOid, oid, 0) : std::nullopt;
      if (!text) return Null{};
      return oid >= kFirstNormalOid && text->starts_with("table ");
    });
  }
  if (name == "pg_get_expr" && (n == 2 || n == 3) && args[0]->type.id == TypeId::text) {
    // adbin (pg_attrdef) holds the printed expression itself here. A
    // sequence's regclass prints schema-qualified when the search path does
    // not reach public, as regclass output does (pg_dump runs with an empty path).
    const Settings* settings = context.settings;
    return call({TypeId::text}, name, std::move(args), [settings](std::span<const Value> a) -> Value {
      if (is_null(a[0]) || public_on_search_path(settings)) return a[0];
      const std::string sequence = dml::nextval_sequence(std::get<std::string>(a[0]));
      if (sequence.empty() || sequence.find('.') != std::string::npos) return a[0];
      return "nextval('public." + sequence + "'::regclass)";
    }, false);
  }
  if (name == "pg_get_viewdef" && (n == 1 || n == 2)) {
    // (oid | regclass | name [, pretty | wrap column]): NULL for an oid no view has, as PostgreSQL.
    const bool by_name = is_text_kind(args[0]->type.id) || args[0]->type.id == TypeId::unknown;
    args[0] = by_name ? to_type(std::move(args[0]), TypeId::text, context) : oid_argument(std::move(args[0]), context);
    if (n == 2 && args[1]->type.id != TypeId::int4) args[1] = to_type(std::move(args[1]), TypeId::boolean, context);
    const Settings* settings = context.settings;
    return call({TypeId::text}, name, std::move(args), [by_name, settings](std::span<const Value> a) -> Value {
      if (is_null(a[0]) || (a.size() == 2 && is_null(a[1]))) return Null{};
      const auto views = view_definitions();
      if (!views) return Null{};
      std::optional<uint32_t> oid;
      if (by_name) {
        const std::string& text = std::get<std::string>(a[0]);
        oid = views->oid_of(text);
        if (!oid) throw Error(SqlState::undefined_table, "relation \"" + text + "\" does not exist");
      } else {
        oid = static_cast<uint32_t>(std::get<int64_t>(a[0]));
      }
      // The (oid, int) form wraps lines at a column: pretty, as in PostgreSQL.
      const bool pretty = a.size() == 2 && (std::holds_alternative<bool>(a[1]) ? std::get<bool>(a[1]) : true);
      auto text = views->definition(*oid, pretty, !public_on_search_path(settings));
      return text ? Value{std::move(*text)} : Value{Null{}};
    });
  }
  if (name == "pg_get_indexdef" && (n == 1 || n == 3)) {
    // (oid): the statement with the table schema-qualified; (oid, column,
    // pretty): pretty leaves out a schema the search path holds.
    args[0] = oid_argument(std::move(args[0]), context);
    if (n == 3) {
      args[1] = to_type(std::move(args[1]), TypeId::int4, context);
      args[2] = to_type(std::move(args[2]), TypeId::boolean, context);
    }
    const Settings* settings = context.settings;
    return call({TypeId::text}, name, std::move(args), [settings](std::span<const Value> a) -> Value {
      const auto definitions = key_definitions();
      if (!definitions) return Null{};
      const int column = a.size() == 3 ? static_cast<int>(std::get<int64_t>(a[1])) : 0;
      const bool pretty = a.size() == 3 && std::get<bool>(a[2]);
      const bool qualify = !pretty || !public_on_search_path(settings);
      auto text = definitions->index_definition(static_cast<uint32_t>(std::get<int64_t>(a[0])), column, qualify);
      return text ? Value{std::move(*text)} : Value{Null{}};
    });
  }
  if (name == "pg_get_constraintdef" && (n == 1 || n == 2)) {
    // Keys are printed the same pretty or not.
    args[0] = oid_argument(std::move(args[0]), context);
    if (n == 2) args[1] = to_type(std::move(args[1]), TypeId::boolean, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const auto definitions = key_definitions();
      if (!definitions) return Null{};
      auto text = definitions->constraint_definition(static_cast<uint32_t>(std::get<int64_t>(a[0])));
      return text ? Value{std::move(*text)} : Value{Null{}};
    });
  }
  if (name == "obj_description" && n == 2 && args[1]->is_constant()) {
    // A function's or operator's comment (psql's \df+, \do+) or a built-in
    // type's, access method's, language's, schema's or extension's: pg_description's row.
    const auto* catalog = dynamic_cast<const ConstExpr*>(args[1].get());
    const std::string catalog_name = catalog != nullptr && std::holds_alternative<std::string>(catalog->value)
                                         ? std::get<std::string>(catalog->value) : std::string();
    const auto classoid = comment_catalog_oid(catalog_name);
    if (catalog_name == "pg_operator") {
      args[0] = oid_argument(std::move(args[0]), context);
      args[1] = to_type(std::move(args[1]), TypeId::name, context);
      return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
        const PostgresOperator* o = supported_operator(static_cast<uint32_t>(std::get<int64_t>(a[0])));
        return o == nullptr || o->description == nullptr ? Value{Null{}} : Value{std::string(o->description)};
      });
    }
    if (catalog_name == "pg_proc" || classoid) {
      args[0] = oid_argument(std::move(args[0]), context);
      args[1] = to_type(std::move(args[1]), TypeId::name, context);
      return call({TypeId::text}, name, std::move(args), [classoid](std::span<const Value> a) -> Value {
        const int64_t oid = std::get<int64_t>(a[0]);
        if (classoid) {
          const auto comment = builtin_comment(*classoid, oid);
          return comment ? Value{std::string(*comment)} : Value{Null{}};
        }
        const PostgresFunction* f = supported_function(static_cast<uint32_t>(oid));
        return f == nullptr || f->description == nullptr ? Value{Null{}} : Value{std::string(f->description)};
      });
    }
  }
  if (((name == "pg_get_expr" || name == "pg_get_viewdef" || name == "pg_get_triggerdef") &&
       (n == 1 || n == 2 || n == 3)) ||
      // pg_rewrite lists no rules: NULL, as PostgreSQL answers for an OID no rule has.
      (name == "pg_get_ruledef" && (n == 1 || n == 2)) ||
      ((name == "obj_description" || name == "shobj_description" || name == "col_description") && n == 2) ||
      (name == "obj_description" && n == 1) || (name == "pg_get_partkeydef" && n == 1) ||
      // pg_statistic_ext lists nothing either (psql's \d asks for each row's columns).
      ((name == "pg_get_statisticsobjdef_columns" || name == "pg_get_statisticsobjdef") && n == 1)) {
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value>) -> Value { return Null{}; }, false);
  }
  if (name == "pg_describe_object" && n == 3) {
    // NULL for an object the catalogs do not hold, as PostgreSQL answers.
    args[0] = oid_argument(std::move(args[0]), context);
    args[1] = oid_argument(std::move(args[1]), context);
    args[2] = to_type(std::move(args[2]), TypeId::int4, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const auto descriptions = object_descriptions();
      if (!descriptions) return Null{};
      auto text = descriptions->describe(std::get<int64_t>(a[0]), std::get<int64_t>(a[1]), std::get<int64_t>(a[2]));
      return text ? Value{std::move(*text)} : Value{Null{}};
    });
  }
  if ((name == "pg_get_functiondef" || name == "pg_get_function_sqlbody") && n == 1) {
    // Built-in functions' definitions (psql's \sf) and the SQL-standard
    // bodies of those written in SQL; NULL for an OID pg_proc does not list, as PostgreSQL answers.
    args[0] = oid_argument(std::move(args[0]), context);
    const bool body = name == "pg_get_function_sqlbody";
    return call({TypeId::text}, name, std::move(args), [body](std::span<const Value> a) -> Value {
      const PostgresFunction* f = supported_function(static_cast<uint32_t>(std::get<int64_t>(a[0])));
      if (f == nullptr) return Null{};
      if (body) return f->sqlbody == nullptr ? Value{Null{}} : Value{std::string(f->sqlbody)};
      return function_definition(*f);
    });
  }
  if ((name == "pg_get_function_result" || name == "pg_get_function_arguments" ||
       name == "pg_get_function_identity_arguments") && n == 1) {
    // PostgreSQL's own texts for the pg_proc rows Tally lists; NULL for any other OID, as PostgreSQL answers.
    args[0] = oid_argument(std::move(args[0]), context);
    const char kind = name == "pg_get_function_result" ? 'r' : name == "pg_get_function_arguments" ? 'a' : 'i';
    return call({TypeId::text}, name, std::move(args), [kind](std::span<const Value> a) -> Value {
      const PostgresFunction* f = supported_function(static_cast<uint32_t>(std::get<int64_t>(a[0])));
      if (f == nullptr) return Null{};
      return std::string(kind == 'r' ? f->result : kind == 'a' ? f->arguments : f->identity_arguments);
    });
  }
  if (name == "pg_tablespace_location" && n == 1) {
    args[0] = oid_argument(std::move(args[0]), context);
    // The built-in tablespaces live in the data directory: an empty location.
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value>) -> Value { return std::string(); });
  }
  if (((name == "pg_table_size" || name == "pg_relation_size" || name == "pg_total_relation_size" ||
        name == "pg_indexes_size") && n == 1) ||
      (name == "pg_relation_size" && n == 2) || (name == "pg_database_size" && n == 1) ||
      (name == "pg_tablespace_size" && n == 1)) {
    // Sizes on disk are not known here (storage keeps column chunk files
    // the executor's functions do not see): 0 bytes, which tools such as
    // postgres_fdw's ANALYZE read as a small relation.
    for (auto& a : args) {
      if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
    }
    return call({TypeId::int8}, name, std::move(args), [](std::span<const Value>) -> Value { return int64_t{0}; });
  }
  if (name == "pg_size_pretty" && n == 1 && args[0]->type.id != TypeId::numeric) {
    args[0] = to_type(std::move(args[0]), TypeId::int8, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return size_pretty(std::get<int64_t>(a[0]));
    });
  }
  if (name == "pg_size_pretty" && n == 1) {
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return size_pretty_numeric(value_to_text(SqlType{TypeId::numeric}, a[0]));
    });
  }
  if (name == "current_schemas" && n == 1) {
    // name[] in PostgreSQL; text[] (the engine's array of names) here.
    args[0] = to_type(std::move(args[0]), TypeId::boolean, context);
    const Settings* settings = context.settings;
    return call({TypeId::text_array}, name, std::move(args), [settings](std::span<const Value> a) -> Value {
      std::vector<std::optional<std::string>> elements;
      for (auto& s : current_schemas(std::get<bool>(a[0]), settings)) elements.emplace_back(std::move(s));
      return array_literal(elements);
    });
  }
  if (name == "pg_get_serial_sequence" && n == 2) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    SessionSequences* sequences = context.sequences;
    return call({TypeId::text}, name, std::move(args), [sequences](std::span<const Value> a) -> Value {
      return serial_sequence(sequences, std::get<std::string>(a[0]), std::get<std::string>(a[1]));
    });
  }
  if (name == "json_build_object" && n % 2 == 0) {
    // PostgreSQL's result is json; Tally has no json type, so its text form
    // is text here (SQLAlchemy's column reflection reads it for identity
    // columns' sequence options).
    for (size_t i = 0; i < n; ++i) {
      const TypeId id = args[i]->type.id;
      const bool keeps = id == TypeId::boolean || id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8;
      if (i % 2 == 0 || !keeps) args[i] = coerce_to(std::move(args[i]), {TypeId::text}, CastContext::explicit_, context);
    }
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      std::string out = "{";
      for (size_t i = 0; i + 1 < a.size(); i += 2) {
        if (is_null(a[i])) throw Error(SqlState::invalid_parameter_value, "argument " + std::to_string(i + 1) + ": key must not be null");
        if (i > 0) out += ", ";
        append_json(out, a[i]);
        out += " : ";
        append_json(out, a[i + 1]);
      }
      return out + "}";
    }, false);
  }
  if (name == "quote_ident" && n == 1) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return quote_ident(std::get<std::string>(a[0]));
    });
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
