#include "executor/introspection/catalog_relations.hpp"
#include "executor/introspection/tuning_cache_relation.hpp"  // tune: tally_tuning_cache

#include <array>

#include "executor/introspection/depend_relation.hpp"
#include "executor/introspection/key_relations.hpp"
#include "executor/introspection/other_catalogs.hpp"
#include "executor/introspection/proc_relation.hpp"
#include "executor/cast_catalog.hpp"
#include "executor/function_catalog.hpp"
#include "executor/operator_catalog.hpp"
#include "executor/scalar/builtin_comments.hpp"
#include "executor/introspection/stat_activity_relation.hpp"
#include "executor/introspection/statio_relations.hpp"
#include "executor/introspection/sequence_relations.hpp"
#include "executor/introspection/view_relations.hpp"
#include "executor/introspection/settings_relation.hpp"
#include "executor/introspection/system_relations.hpp"

namespace tally::executor::introspection {
namespace {

struct TypeRow {
  uint32_t oid;
  const char* name;
  int16_t len;
  bool byval;
  char category;
  uint32_t elem;
  uint32_t array;
  uint32_t collation;
  char align;
  char storage;
};

// pg_type rows of the types Tally knows (common/sql_type.hpp) and the common
// built-ins clients look up; values as PostgreSQL 15's pg_type holds them.
constexpr std::array<TypeRow, 44> kTypes{{
    {16, "bool", 1, true, 'B', 0, 1000, 0, 'c', 'p'},
    {17, "bytea", -1, false, 'U', 0, 1001, 0, 'i', 'x'},
    {18, "char", 1, true, 'Z', 0, 1002, 0, 'c', 'p'},
    {19, "name", 64, false, 'S', 18, 1003, 950, 'c', 'p'},
    {20, "int8", 8, true, 'N', 0, 1016, 0, 'd', 'p'},
    {21, "int2", 2, true, 'N', 0, 1005, 0, 's', 'p'},
    {22, "int2vector", -1, false, 'A', 21, 1006, 0, 'i', 'p'},
    {23, "int4", 4, true, 'N', 0, 1007, 0, 'i', 'p'},
    {24, "regproc", 4, true, 'N', 0, 1008, 0, 'i', 'p'},
    {25, "text", -1, false, 'S', 0, 1009, 100, 'i', 'x'},
    {26, "oid", 4, true, 'N', 0, 1028, 0, 'i', 'p'},
    {30, "oidvector", -1, false, 'A', 26, 1013, 0, 'i', 'p'},
    {700, "float4", 4, true, 'N', 0, 1021, 0, 'i', 'p'},
    {701, "float8", 8, true, 'N', 0, 1022, 0, 'd', 'p'},
    {705, "unknown", -2, false, 'X', 0, 0, 0, 'c', 'p'},
    {1009, "_text", -1, false, 'A', 25, 0, 100, 'i', 'x'},
    {1042, "bpchar", -1, false, 'S', 0, 1014, 100, 'i', 'x'},
    {1043, "varchar", -1, false, 'S', 0, 1015, 100, 'i', 'x'},
    {1082, "date", 4, true, 'D', 0, 1182, 0, 'i', 'p'},
    {1083, "time", 8, true, 'D', 0, 1183, 0, 'd', 'p'},
    {1114, "timestamp", 8, true, 'D', 0, 1115, 0, 'd', 'p'},
    {1184, "timestamptz", 8, true, 'D', 0, 1185, 0, 'd', 'p'},
    {1266, "timetz", 12, false, 'D', 0, 1270, 0, 'd', 'p'},
    {1186, "interval", 16, false, 'T', 0, 1187, 0, 'd', 'p'},
    {1700, "numeric", -1, false, 'N', 0, 1231, 0, 'i', 'm'},
    {2205, "regclass", 4, true, 'N', 0, 2210, 0, 'i', 'p'},
    {2206, "regtype", 4, true, 'N', 0, 2211, 0, 'i', 'p'},
    {2203, "regoper", 4, true, 'N', 0, 2208, 0, 'i', 'p'},
    {2202, "regprocedure", 4, true, 'N', 0, 2207, 0, 'i', 'p'},
    {4089, "regnamespace", 4, true, 'N', 0, 4090, 0, 'i', 'p'},
    {1007, "_int4", -1, false, 'A', 23, 0, 0, 'i', 'x'},
    {1028, "_oid", -1, false, 'A', 26, 0, 0, 'i', 'x'},
    {1003, "_name", -1, false, 'A', 19, 0, 950, 'i', 'x'},
    // Pseudo-types: catalog queries compare prorettype with 'trigger'::regtype;
    // sqlsmith looks internal and anyarray up to leave them out of its queries.
    {2279, "trigger", 4, true, 'P', 0, 0, 0, 'i', 'p'},
    {2281, "internal", 8, true, 'P', 0, 0, 0, 'd', 'p'},
    {2277, "anyarray", -1, false, 'P', 0, 0, 0, 'd', 'x'},
    // What a select list's _pg_expandarray(...) gives (executor/record_value.hpp).
    {2249, "record", -1, false, 'P', 0, 2287, 0, 'd', 'x'},
    // pg_sleep's result type, and the polymorphic argument types pg_proc's rows name.
    {2278, "void", 4, true, 'P', 0, 0, 0, 'i', 'p'},
    {2276, "any", 4, true, 'P', 0, 0, 0, 'i', 'p'},
    {2283, "anyelement", 4, true, 'P', 0, 0, 0, 'i', 'p'},
    {2776, "anynonarray", 4, true, 'P', 0, 0, 0, 'i', 'p'},
    {5077, "anycompatible", 4, true, 'P', 0, 0, 0, 'i', 'p'},
    {5078, "anycompatiblearray", -1, false, 'P', 0, 0, 0, 'd', 'x'},
    {5079, "anycompatiblenonarray", 4, true, 'P', 0, 0, 0, 'i', 'p'},
}};

// Each type's I/O functions (pg_type.typinput ...), by OID as PostgreSQL 15
// numbers them; 0 for none. regproc prints and reads their names.
struct TypeFunctions {
  uint32_t type;
  uint32_t subscript, input, output, receive, send, modin, modout, analyze;
};
constexpr std::array<TypeFunctions, 44> kTypeFunctions{{
    {16,0,1242,1243,2436,2437,0,0,0},
    {17,0,1244,31,2412,2413,0,0,0},
    {18,0,1245,33,2434,2435,0,0,0},
    {19,6180,34,35,2422,2423,0,0,0},
    {20,0,460,461,2408,2409,0,0,0},
    {21,0,38,39,2404,2405,0,0,0},
    {22,6179,40,41,2410,2411,0,0,0},
    {23,0,42,43,2406,2407,0,0,0},
    {24,0,44,45,2444,2445,0,0,0},
    {25,0,46,47,2414,2415,0,0,0},
    {26,0,1798,1799,2418,2419,0,0,0},
    {30,6179,54,55,2420,2421,0,0,0},
    {700,0,200,201,2424,2425,0,0,0},
    {701,0,214,215,2426,2427,0,0,0},
    {705,0,109,110,2416,2417,0,0,0},
    {1003,6179,750,751,2400,2401,0,0,3816},
    {1007,6179,750,751,2400,2401,0,0,3816},
    {1009,6179,750,751,2400,2401,0,0,3816},
    {1028,6179,750,751,2400,2401,0,0,3816},
    {1042,0,1044,1045,2430,2431,2913,2914,0},
    {1043,0,1046,1047,2432,2433,2915,2916,0},
    {1082,0,1084,1085,2468,2469,0,0,0},
    {1083,0,1143,1144,2470,2471,2909,2910,0},
    {1114,0,1312,1313,2474,2475,2905,2906,0},
    {1184,0,1150,1151,2476,2477,2907,2908,0},
    {1266,0,1350,1351,2472,2473,2911,2912,0},
    {1186,0,1160,1161,2478,2479,2903,2904,0},
    {1700,0,1701,1702,2460,2461,2917,2918,0},
    {2203,0,2214,2215,2448,2449,0,0,0},
    {2202,0,2212,2213,2446,2447,0,0,0},
    {2205,0,2218,2219,2452,2453,0,0,0},
    {2206,0,2220,2221,2454,2455,0,0,0},
    {2277,0,2296,2297,2502,2503,0,0,0},
    {2279,0,2300,2301,0,0,0,0,0},
    {2281,0,2304,2305,0,0,0,0,0},
    {4089,0,4084,4085,4087,4088,0,0,0},
    {2249,0,2290,2291,2402,2403,0,0,0},
    {2278,0,2298,2299,3120,3121,0,0,0},
    {2276,0,2294,2295,0,0,0,0,0},
    {2283,0,2312,2313,0,0,0,0,0},
    {2776,0,2777,2778,0,0,0,0,0},
    {5077,0,5086,5087,0,0,0,0,0},
    {5078,0,5088,5089,5090,5091,0,0,0},
    {5079,0,5092,5093,0,0,0,0,0},
}};

const TypeFunctions* find_type_functions(uint32_t type_oid) {
  for (const auto& f : kTypeFunctions) {
    if (f.type == type_oid) return &f;
  }
  return nullptr;
}

const TypeRow* find_type(uint32_t type_oid) {
  for (const auto& t : kTypes) {
    if (t.oid == type_oid) return &t;
  }
  return nullptr;
}

SqlType T(TypeId id) { return SqlType{id}; }
Value S(std::string s) { return Value{std::move(s)}; }
Value I(int64_t v) { return Value{v}; }
Value B(bool v) { return Value{v}; }
Value C(char c) { return c == 0 ? Value{std::string()} : Value{std::string(1, c)}; }
const Value kNull = Null{};

Relation make(std::initializer_list<std::pair<const char*, TypeId>> columns) {
  Relation r;
  for (const auto& [name, id] : columns) r.columns.push_back({name, T(id)});
  return r;
}

int64_t namespace_oid(const std::string& schema) { return schema == "public" ? kPublicOid : kPublicOid; }

// The columns of a system relation (its own relation built without rows of
// system relations, so that pg_class and pg_attribute do not recurse).
std::vector<RelationColumn> system_relation_columns(const SystemRelation& sys) {
  CatalogSource empty;
  empty.with_system_relations = false;
  const auto relation = build_relation(sys.namespace_oid == kPgCatalogOid ? "pg_catalog" : "information_schema",
                                       sys.name, empty);
  return relation ? relation->columns : std::vector<RelationColumn>{};
}

Relation pg_type() {
  Relation r = make({{"oid", TypeId::oid},          {"typname", TypeId::name},      {"typnamespace", TypeId::oid},
                     {"typowner", TypeId::oid},     {"typlen", TypeId::int2},       {"typbyval", TypeId::boolean},
                     {"typtype", TypeId::char_},    {"typcategory", TypeId::char_}, {"typispreferred", TypeId::boolean},
                     {"typisdefined", TypeId::boolean}, {"typdelim", TypeId::char_}, {"typrelid", TypeId::oid},
                     {"typsubscript", TypeId::regproc}, {"typelem", TypeId::oid},  {"typarray", TypeId::oid},
                     {"typinput", TypeId::regproc}, {"typoutput", TypeId::regproc}, {"typreceive", TypeId::regproc},
                     {"typsend", TypeId::regproc},  {"typmodin", TypeId::regproc}, {"typmodout", TypeId::regproc},
                     {"typanalyze", TypeId::regproc}, {"typalign", TypeId::char_},
                     {"typstorage", TypeId::char_}, {"typnotnull", TypeId::boolean}, {"typbasetype", TypeId::oid},
                     {"typtypmod", TypeId::int4},   {"typndims", TypeId::int4},     {"typcollation", TypeId::oid},
                     {"typdefaultbin", TypeId::text}, {"typdefault", TypeId::text},  {"typacl", TypeId::text_array}});
  for (const auto& t : kTypes) {
    const bool preferred = t.oid == 25 || t.oid == 701 || t.oid == 16 || t.oid == 1184 || t.oid == 26 || t.oid == 1186;
    const TypeFunctions none{};
    const TypeFunctions* f = find_type_functions(t.oid);
    if (f == nullptr) f = &none;
    r.rows.push_back({I(t.oid), S(t.name), I(kPgCatalogOid), I(kBootstrapUserOid), I(t.len), B(t.byval),
                      C(t.oid == 705 || t.category == 'P' ? 'p' : 'b'), C(t.category), B(preferred), B(true), C(','), I(0),
                      I(f->subscript), I(t.elem), I(t.array), I(f->input), I(f->output), I(f->receive), I(f->send),
                      I(f->modin), I(f->modout), I(f->analyze), C(t.align), C(t.storage), B(false), I(0), I(-1), I(0),
                      I(t.collation), kNull, kNull, kNull});
  }
  return r;
}

struct NamespaceRow {
  int64_t oid;
  std::string_view name;
  int64_t owner;
};

// public belongs to pg_database_owner (6171) since PostgreSQL 15.
constexpr NamespaceRow kNamespaces[] = {{99, "pg_toast", kBootstrapUserOid},
                                        {kPgCatalogOid, "pg_catalog", kBootstrapUserOid},
                                        {kPublicOid, "public", kDatabaseOwnerOid},
                                        {kInformationSchemaOid, "information_schema", kBootstrapUserOid}};

// The public schema's privileges as initdb grants them (psql's \dn+ prints
// them); pg_init_privs holds the same, so pg_dump writes no GRANT for them.
constexpr const char* kPublicAcl = "{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}";

Relation pg_namespace(const CatalogSource&) {
  Relation r = make({{"oid", TypeId::oid}, {"nspname", TypeId::name}, {"nspowner", TypeId::oid}, {"nspacl", TypeId::text_array}});
  for (const auto& n : kNamespaces) {
    r.rows.push_back({I(n.oid), S(std::string(n.name)), I(n.owner), n.oid == kPublicOid ? S(kPublicAcl) : kNull});
  }
  return r;
}

Relation pg_class(const CatalogSource& source) {
  Relation r = make({{"oid", TypeId::oid},           {"relname", TypeId::name},          {"relnamespace", TypeId::oid},
                     {"reltype", TypeId::oid},       {"reloftype", TypeId::oid},         {"relowner", TypeId::oid},
                     {"relam", TypeId::oid},         {"relfilenode", TypeId::oid},       {"reltablespace", TypeId::oid},
                     {"relpages", TypeId::int4},     {"reltuples", TypeId::float4},      {"relallvisible", TypeId::int4},
                     {"reltoastrelid", TypeId::oid}, {"relhasindex", TypeId::boolean},   {"relisshared", TypeId::boolean},
                     {"relpersistence", TypeId::char_}, {"relkind", TypeId::char_},      {"relnatts", TypeId::int2},
                     {"relchecks", TypeId::int2},    {"relhasrules", TypeId::boolean},   {"relhastriggers", TypeId::boolean},
                     {"relhassubclass", TypeId::boolean}, {"relrowsecurity", TypeId::boolean},
                     {"relforcerowsecurity", TypeId::boolean}, {"relispopulated", TypeId::boolean},
                     {"relreplident", TypeId::char_}, {"relispartition", TypeId::boolean}, {"relrewrite", TypeId::oid},
                     // xid in PostgreSQL (oid here: the same text form). Tally has no
                     // transaction IDs: 0, what PostgreSQL holds for relations without storage.
                     {"relfrozenxid", TypeId::oid}, {"relminmxid", TypeId::oid},
                     {"reloptions", TypeId::text_array}, {"relacl", TypeId::text_array},
                     {"relpartbound", TypeId::text}});
  for (const auto& t : source.tables) {
    r.rows.push_back({I(t.oid), S(t.name), I(namespace_oid(t.schema)), I(0), I(0), I(kBootstrapUserOid), I(2),
                      I(t.oid), I(0), I(0), Value{-1.0}, I(0), I(0), B(!t.keys.empty()), B(false), C('p'), C('r'),
                      I(static_cast<int64_t>(t.columns.size())), I(0), B(false), B(false), B(false), B(false),
                      B(false), B(true), C('d'), B(false), I(0), I(0), I(0), kNull, kNull, kNull});
  }
  add_index_classes(r, source);
  add_sequence_classes(r, source);
  add_view_classes(r, source);
  if (!source.with_system_relations) return r;
  for (const auto& sys : system_relations()) {
    const bool view = sys.kind == 'v';
    const auto natts = static_cast<int64_t>(system_relation_columns(sys).size());
    r.rows.push_back({I(sys.oid), S(sys.name), I(sys.namespace_oid), I(sys.row_type), I(0), I(kBootstrapUserOid),
                      I(view ? 0 : 2), I(0), I(sys.shared ? 1664 : 0), I(0), Value{-1.0}, I(0), I(0), B(!view),
                      B(sys.shared), C('p'), C(sys.kind), I(natts), I(0), B(view), B(false), B(false), B(false),
                      B(false), B(true), C('n'), B(false), I(0), I(0), I(0), kNull, kNull, kNull});
  }
  return r;
}

Relation pg_attribute(const CatalogSource& source) {
  Relation r = make({{"attrelid", TypeId::oid},     {"attname", TypeId::name},       {"atttypid", TypeId::oid},
                     {"attstattarget", TypeId::int4}, {"attlen", TypeId::int2},       {"attnum", TypeId::int2},
                     {"attndims", TypeId::int4},    {"attcacheoff", TypeId::int4},   {"atttypmod", TypeId::int4},
                     {"attbyval", TypeId::boolean}, {"attalign", TypeId::char_},     {"attstorage", TypeId::char_},
                     {"attcompression", TypeId::char_}, {"attnotnull", TypeId::boolean}, {"atthasdef", TypeId::boolean},
                     {"atthasmissing", TypeId::boolean}, {"attidentity", TypeId::char_}, {"attgenerated", TypeId::char_},
                     {"attisdropped", TypeId::boolean}, {"attislocal", TypeId::boolean}, {"attinhcount", TypeId::int4},
                     {"attcollation", TypeId::oid}, {"attacl", TypeId::text_array}, {"attoptions", TypeId::text_array},
                     // attmissingval is anyarray in PostgreSQL: always NULL here (ADD COLUMN's
                     // missing values live in the table's snapshot).
                     {"attfdwoptions", TypeId::text_array}, {"attmissingval", TypeId::text}});
  // System columns every heap table has (attnum < 0), as PostgreSQL lists them.
  struct SystemColumn {
    const char* name;
    uint32_t type;
    int16_t len;
    char align;
    int num;
  };
  const SystemColumn system[] = {{"tableoid", 26, 4, 'i', -6}, {"cmax", 29, 4, 'i', -5}, {"xmax", 28, 4, 'i', -4},
                                 {"cmin", 29, 4, 'i', -3},     {"xmin", 28, 4, 'i', -2}, {"ctid", 27, 6, 's', -1}};
  for (const auto& t : source.tables) {
    for (const auto& s : system) {
      r.rows.push_back({I(t.oid), S(s.name), I(s.type), I(0), I(s.len), I(s.num), I(0), I(-1), I(-1),
                        B(s.type != 27), C(s.align), C('p'), C(0), B(true), B(false), B(false), C(0), C(0),
                        B(false), B(true), I(0), I(0), kNull, kNull, kNull, kNull});
    }
    // A table's columns; an index's (attrelid the index) repeat its key
    // columns' names and types, without constraints or defaults, as
    // PostgreSQL's do (psql's \d INDEX lists them).
    const auto add_column = [&](uint32_t relation, const UserColumn& c, size_t attnum, bool of_index) {
      const uint32_t type = type_oid(c.type.id);
      const TypeRow* row = find_type(type);
      r.rows.push_back({I(relation), S(c.name), I(type), I(-1), I(row ? row->len : -1),
                        I(static_cast<int64_t>(attnum)), I(0), I(-1), I(c.type.typmod), B(row ? row->byval : false),
                        C(row ? row->align : 'i'), C(row ? row->storage : 'x'), C(0), B(!of_index && c.not_null),
                        B(!of_index && !c.default_expr.empty() && !c.identity), B(false),
                        C(of_index ? 0 : c.identity), C(0), B(false), B(true), I(0), I(row ? row->collation : 0),
                        kNull, kNull, kNull, kNull});
    };
    for (size_t i = 0; i < t.columns.size(); ++i) add_column(t.oid, t.columns[i], i + 1, false);
    for (const auto& key : t.keys) {
      for (size_t i = 0; i < key.columns.size(); ++i) {
        add_column(key.index_oid, t.columns[static_cast<size_t>(key.columns[i])], i + 1, true);
      }
    }
  }
  add_view_attributes(r, source);
  if (!source.with_system_relations) return r;
  for (const auto& sys : system_relations()) {
    const auto columns = system_relation_columns(sys);
    for (size_t i = 0; i < columns.size(); ++i) {
      const uint32_t type = type_oid(columns[i].type.id);
      const TypeRow* row = find_type(type);
      r.rows.push_back({I(sys.oid), S(columns[i].name), I(type), I(-1), I(row ? row->len : -1),
                        I(static_cast<int64_t>(i + 1)), I(0), I(-1), I(-1), B(row ? row->byval : false),
                        C(row ? row->align : 'i'), C(row ? row->storage : 'x'), C(0), B(false), B(false), B(false),
                        C(0), C(0), B(false), B(true), I(0), I(row ? row->collation : 0), kNull, kNull, kNull, kNull});
    }
  }
  return r;
}

// pg_tables: user tables and the system catalogs (not views).
Relation pg_tables(const CatalogSource& source) {
  Relation r = make({{"schemaname", TypeId::name}, {"tablename", TypeId::name}, {"tableowner", TypeId::name},
                     {"tablespace", TypeId::name}, {"hasindexes", TypeId::boolean}, {"hasrules", TypeId::boolean},
                     {"hastriggers", TypeId::boolean}, {"rowsecurity", TypeId::boolean}});
  for (const auto& t : source.tables) {
    r.rows.push_back({S(t.schema), S(t.name), S(source.user), kNull, B(false), B(false), B(false), B(false)});
  }
  for (const auto& sys : system_relations()) {
    if (sys.kind != 'r') continue;
    r.rows.push_back({S("pg_catalog"), S(sys.name), S(source.user), sys.shared ? S("pg_global") : kNull, B(true),
                      B(false), B(false), B(false)});
  }
  return r;
}

// pg_views: the user's views, then the system views Tally provides, listed
// without a definition (they are generated, not SQL).
Relation pg_views(const CatalogSource& source) {
  Relation r = make({{"schemaname", TypeId::name}, {"viewname", TypeId::name}, {"viewowner", TypeId::name},
                     {"definition", TypeId::text}});
  for (const auto& v : source.views) r.rows.push_back({S(v.schema), S(v.name), S(source.user), S(v.definition)});
  for (const auto& sys : system_relations()) {
    if (sys.kind != 'v') continue;
    r.rows.push_back({S(sys.namespace_oid == kPgCatalogOid ? "pg_catalog" : "information_schema"), S(sys.name),
                      S(source.user), kNull});
  }
  return r;
}

Relation pg_database(const CatalogSource& source) {
  // datfrozenxid and datminmxid are xid in PostgreSQL (oid here), with the
  // values a fresh PostgreSQL 15 cluster's databases have (pg_dump -Fc reads them).
  Relation r = make({{"oid", TypeId::oid},          {"datname", TypeId::name},         {"datdba", TypeId::oid},
                     {"encoding", TypeId::int4},    {"datlocprovider", TypeId::char_}, {"datistemplate", TypeId::boolean},
                     {"datallowconn", TypeId::boolean}, {"datconnlimit", TypeId::int4}, {"datfrozenxid", TypeId::oid},
                     {"datminmxid", TypeId::oid},   {"dattablespace", TypeId::oid},    {"datcollate", TypeId::text},
                     {"datctype", TypeId::text},    {"daticulocale", TypeId::text},    {"datcollversion", TypeId::text},
                     {"datacl", TypeId::text_array}});
  r.rows.push_back({I(kDatabaseOid), S(source.database), I(kBootstrapUserOid), I(6), C('c'), B(false), B(true), I(-1), I(716),
                    I(1), I(1663), S("C.UTF-8"), S("C.UTF-8"), kNull, kNull, kNull});
  return r;
}

// A user is a superuser (it reads and writes every table) that cannot create
// roles or databases, replicate or bypass row security: Tally has none of
// those statements, so \du says what the user can do here. The roles: the connected user as the bootstrap superuser (OID 10, who owns
// every object here) and pg_database_owner, in each relation's own column
// order: pg_roles and pg_user (views, passwords masked) and pg_authid (the
// catalog; the password is not shown here either).
enum class RoleRelation { roles, user, authid };

Relation role_relation(const CatalogSource& source, RoleRelation kind) {
  if (kind == RoleRelation::user) {
    Relation r = make({{"usename", TypeId::name}, {"usesysid", TypeId::oid}, {"usecreatedb", TypeId::boolean},
                       {"usesuper", TypeId::boolean}, {"userepl", TypeId::boolean}, {"usebypassrls", TypeId::boolean},
                       {"passwd", TypeId::text}, {"valuntil", TypeId::timestamptz}, {"useconfig", TypeId::text_array}});
    r.rows.push_back({S(source.user), I(kBootstrapUserOid), B(false), B(true), B(false), B(false), S("********"), kNull,
                      kNull});
    return r;
  }
  struct Role {
    int64_t oid;
    std::string name;
    bool super, login;
  };
  // pg_database_owner owns the public schema since PostgreSQL 15 (pg_dump
  // looks every owner up here); it cannot log in.
  const Role roles[] = {{kBootstrapUserOid, source.user, true, true}, {kDatabaseOwnerOid, "pg_database_owner", false, false}};
  if (kind == RoleRelation::authid) {
    Relation r = make({{"oid", TypeId::oid}, {"rolname", TypeId::name}, {"rolsuper", TypeId::boolean},
                       {"rolinherit", TypeId::boolean}, {"rolcreaterole", TypeId::boolean},
                       {"rolcreatedb", TypeId::boolean}, {"rolcanlogin", TypeId::boolean},
                       {"rolreplication", TypeId::boolean}, {"rolbypassrls", TypeId::boolean},
                       {"rolconnlimit", TypeId::int4}, {"rolpassword", TypeId::text}, {"rolvaliduntil", TypeId::timestamptz}});
    for (const auto& role : roles) {
      r.rows.push_back({I(role.oid), S(role.name), B(role.super), B(true), B(false), B(false), B(role.login), B(false),
                        B(false), I(-1), kNull, kNull});
    }
    return r;
  }
  Relation r = make({{"rolname", TypeId::name}, {"rolsuper", TypeId::boolean}, {"rolinherit", TypeId::boolean},
                     {"rolcreaterole", TypeId::boolean}, {"rolcreatedb", TypeId::boolean},
                     {"rolcanlogin", TypeId::boolean}, {"rolreplication", TypeId::boolean},
                     {"rolconnlimit", TypeId::int4}, {"rolpassword", TypeId::text},
                     {"rolvaliduntil", TypeId::timestamptz}, {"rolbypassrls", TypeId::boolean},
                     {"rolconfig", TypeId::text_array}, {"oid", TypeId::oid}});
  for (const auto& role : roles) {
    r.rows.push_back({S(role.name), B(role.super), B(true), B(false), B(false), B(role.login), B(false), I(-1),
                      S("********"), kNull, B(false), kNull, I(role.oid)});
  }
  return r;
}

Relation pg_am() {
  // amhandler: the handler functions' OIDs in PostgreSQL 15 (heap_tableam_handler, bthandler).
  Relation r = make({{"oid", TypeId::oid}, {"amname", TypeId::name}, {"amhandler", TypeId::regproc},
                     {"amtype", TypeId::char_}});
  r.rows.push_back({I(2), S("heap"), I(3), C('t')});
  r.rows.push_back({I(403), S("btree"), I(330), C('i')});
  return r;
}

// information_schema columns are domains over name (sql_identifier) and
// varchar (character_data, yes_or_no); their base types are sent here.
Relation info_tables(const CatalogSource& source) {
  Relation r = make({{"table_catalog", TypeId::name}, {"table_schema", TypeId::name}, {"table_name", TypeId::name},
                     {"table_type", TypeId::varchar}, {"is_insertable_into", TypeId::varchar},
                     {"is_typed", TypeId::varchar}, {"commit_action", TypeId::varchar}});
  for (const auto& t : source.tables) {
    r.rows.push_back({S(source.database), S(t.schema), S(t.name), S("BASE TABLE"), S("YES"), S("NO"), kNull});
  }
  // Tally cannot write through a view, so none is insertable into.
  for (const auto& v : source.views)
    r.rows.push_back({S(source.database), S(v.schema), S(v.name), S("VIEW"), S("NO"), S("NO"), kNull});
  return r;
}

Relation info_columns(const CatalogSource& source) {
  Relation r = make({{"table_catalog", TypeId::name}, {"table_schema", TypeId::name}, {"table_name", TypeId::name},
                     {"column_name", TypeId::name}, {"ordinal_position", TypeId::int4},
                     {"column_default", TypeId::varchar}, {"is_nullable", TypeId::varchar},
                     {"data_type", TypeId::varchar}, {"character_maximum_length", TypeId::int4},
                     {"numeric_precision", TypeId::int4}, {"numeric_scale", TypeId::int4}, {"udt_name", TypeId::name}});
  for (const auto& t : tables_and_views(source)) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const auto& c = t.columns[i];
      std::string data_type = format_type(SqlType{c.type.id});
      Value max_length = kNull, precision = kNull, scale = kNull;
      switch (c.type.id) {
        case TypeId::varchar:
        case TypeId::bpchar:
          if (c.type.char_length() >= 0) max_length = I(c.type.char_length());
          break;
        case TypeId::int2: precision = I(16); scale = I(0); break;
        case TypeId::int4: precision = I(32); scale = I(0); break;
        case TypeId::int8: precision = I(64); scale = I(0); break;
        case TypeId::float4: precision = I(24); break;
        case TypeId::float8: precision = I(53); break;
        case TypeId::numeric:
          if (c.type.typmod >= 0) {
            precision = I(c.type.numeric_precision());
            scale = I(c.type.numeric_scale());
          }
          break;
        default: break;
      }
      const TypeRow* row = find_type(type_oid(c.type.id));
      const Value column_default = c.default_expr.empty() || c.identity ? kNull : S(c.default_expr);
      r.rows.push_back({S(source.database), S(t.schema), S(t.name), S(c.name), I(static_cast<int64_t>(i + 1)), column_default,
                        S(c.not_null ? "NO" : "YES"), S(data_type), max_length, precision, scale,
                        S(row ? row->name : "")});
    }
  }
  return r;
}

Relation info_schemata(const CatalogSource& source) {
  Relation r = make({{"catalog_name", TypeId::name}, {"schema_name", TypeId::name}, {"schema_owner", TypeId::name}});
  for (const char* s : {"information_schema", "pg_catalog", "pg_toast", "public"}) {
    r.rows.push_back({S(source.database), S(s), S(source.user)});
  }
  return r;
}

// Catalogs that exist in PostgreSQL but hold nothing for Tally's tables
// (no indexes, constraints, defaults, comments, inheritance, triggers, ...),
// and the few rows initdb puts in some of them (tablespaces, plpgsql).
Relation empty_relation(std::string_view name) {
  // PostgreSQL 15's column lists; pg_node_tree and aclitem[] columns are
  // text and text[] here (Tally has neither type, and these are always NULL).
  if (name == "pg_auth_members") {
    return make({{"roleid", TypeId::oid}, {"member", TypeId::oid}, {"grantor", TypeId::oid},
                 {"admin_option", TypeId::boolean}});
  }
  if (name == "pg_default_acl") {
    return make({{"oid", TypeId::oid}, {"defaclrole", TypeId::oid}, {"defaclnamespace", TypeId::oid},
                 {"defaclobjtype", TypeId::char_}, {"defaclacl", TypeId::text_array}});
  }
  if (name == "pg_operator") {
    // The operators Tally answers (operator_catalog.hpp). oprcode prints its
    // function's name; the selectivity estimators (oprrest, oprjoin), which
    // pg_proc does not list, are oids here.
    Relation r = make({{"oid", TypeId::oid}, {"oprname", TypeId::name}, {"oprnamespace", TypeId::oid},
                       {"oprowner", TypeId::oid}, {"oprkind", TypeId::char_}, {"oprcanmerge", TypeId::boolean},
                       {"oprcanhash", TypeId::boolean}, {"oprleft", TypeId::oid}, {"oprright", TypeId::oid},
                       {"oprresult", TypeId::oid}, {"oprcom", TypeId::oid}, {"oprnegate", TypeId::oid},
                       {"oprcode", TypeId::regproc}, {"oprrest", TypeId::oid}, {"oprjoin", TypeId::oid}});
    for (const PostgresOperator* o : supported_operators()) {
      r.rows.push_back({I(o->oid), S(o->name), I(kPgCatalogOid), I(kBootstrapUserOid), C(o->kind), B(o->canmerge),
                        B(o->canhash), I(o->left), I(o->right), I(o->result), I(o->commutator), I(o->negator),
                        I(o->code), I(o->restrict_estimator), I(o->join_estimator)});
    }
    return r;
  }
  if (name == "pg_extension") {
    // The one extension initdb installs, as PostgreSQL 15 lists it.
    Relation r = make({{"oid", TypeId::oid}, {"extname", TypeId::name}, {"extowner", TypeId::oid},
                       {"extnamespace", TypeId::oid}, {"extrelocatable", TypeId::boolean},
                       {"extversion", TypeId::text}, {"extconfig", TypeId::text_array},
                       {"extcondition", TypeId::text_array}});
    r.rows.push_back({I(13559), S("plpgsql"), I(kBootstrapUserOid), I(kPgCatalogOid), B(false), S("1.0"), kNull, kNull});
    return r;
  }
  if (name == "pg_enum") {
    return make({{"oid", TypeId::oid}, {"enumtypid", TypeId::oid}, {"enumsortorder", TypeId::float4},
                 {"enumlabel", TypeId::name}});
  }
  if (name == "pg_language") {
    // The languages a PostgreSQL 15 has after initdb (pgcli and JDBC join
    // pg_proc with it; psql's \df prints the names).
    Relation r = make({{"oid", TypeId::oid}, {"lanname", TypeId::name}, {"lanowner", TypeId::oid},
                       {"lanispl", TypeId::boolean}, {"lanpltrusted", TypeId::boolean}, {"lanplcallfoid", TypeId::oid},
                       {"laninline", TypeId::oid}, {"lanvalidator", TypeId::oid}, {"lanacl", TypeId::text_array}});
    r.rows.push_back({I(12), S("internal"), I(kBootstrapUserOid), B(false), B(false), I(0), I(0), I(2246), kNull});
    r.rows.push_back({I(13), S("c"), I(kBootstrapUserOid), B(false), B(false), I(0), I(0), I(2247), kNull});
    r.rows.push_back({I(14), S("sql"), I(kBootstrapUserOid), B(false), B(true), I(0), I(0), I(2248), kNull});
    r.rows.push_back({I(13563), S("plpgsql"), I(kBootstrapUserOid), B(true), B(true), I(13560), I(13561), I(13562), kNull});
    return r;
  }
  if (name == "pg_tablespace") {
    Relation r = make({{"oid", TypeId::oid}, {"spcname", TypeId::name}, {"spcowner", TypeId::oid},
                       {"spcacl", TypeId::text_array}, {"spcoptions", TypeId::text_array}});
    r.rows.push_back({I(1663), S("pg_default"), I(kBootstrapUserOid), kNull, kNull});
    r.rows.push_back({I(1664), S("pg_global"), I(kBootstrapUserOid), kNull, kNull});
    return r;
  }
  if (name == "pg_description") {
    // The comments initdb writes on what Tally lists too: types, access
    // methods, languages, schemas (pg_dump writes COMMENT ON SCHEMA public IS ''
    // when public's is missing), the extension pg_extension lists, pg_proc's functions and pg_operator's operators.
    Relation r = make({{"objoid", TypeId::oid}, {"classoid", TypeId::oid}, {"objsubid", TypeId::int4},
                       {"description", TypeId::text}});
    for (const auto& c : scalar::builtin_comments()) r.rows.push_back({I(c.objoid), I(c.classoid), I(0), S(c.description)});
    for (const PostgresFunction* f : supported_functions()) {
      if (f->description != nullptr) r.rows.push_back({I(f->oid), I(1255), I(0), S(f->description)});  // pg_proc's
    }
    for (const PostgresOperator* o : supported_operators()) {
      if (o->description != nullptr) r.rows.push_back({I(o->oid), I(2617), I(0), S(o->description)});  // pg_operator's
    }
    return r;
  }
  if (name == "pg_inherits") {
    return make({{"inhrelid", TypeId::oid}, {"inhparent", TypeId::oid}, {"inhseqno", TypeId::int4},
                 {"inhdetachpending", TypeId::boolean}});
  }
  if (name == "pg_trigger") {
    // tgargs is bytea in PostgreSQL (text here, always NULL).
    return make({{"oid", TypeId::oid}, {"tgrelid", TypeId::oid}, {"tgparentid", TypeId::oid}, {"tgname", TypeId::name},
                 {"tgfoid", TypeId::oid}, {"tgtype", TypeId::int2}, {"tgenabled", TypeId::char_},
                 {"tgisinternal", TypeId::boolean}, {"tgconstrrelid", TypeId::oid}, {"tgconstrindid", TypeId::oid},
                 {"tgconstraint", TypeId::oid}, {"tgdeferrable", TypeId::boolean}, {"tginitdeferred", TypeId::boolean},
                 {"tgnargs", TypeId::int2}, {"tgattr", TypeId::int2vector}, {"tgargs", TypeId::text},
                 {"tgqual", TypeId::text}, {"tgoldtable", TypeId::name}, {"tgnewtable", TypeId::name}});
  }
  if (name == "pg_collation") {
    return make({{"oid", TypeId::oid}, {"collname", TypeId::name}, {"collnamespace", TypeId::oid},
                 {"collowner", TypeId::oid}, {"collprovider", TypeId::char_}, {"collisdeterministic", TypeId::boolean},
                 {"collencoding", TypeId::int4}, {"collcollate", TypeId::text}, {"collctype", TypeId::text},
                 {"colliculocale", TypeId::text}, {"collversion", TypeId::text}});
  }
  if (name == "pg_policy") {
    return make({{"oid", TypeId::oid}, {"polname", TypeId::name}, {"polrelid", TypeId::oid}, {"polcmd", TypeId::char_},
                 {"polpermissive", TypeId::boolean}, {"polroles", TypeId::oid_array}, {"polqual", TypeId::text},
                 {"polwithcheck", TypeId::text}});
  }
  if (name == "pg_statistic_ext") {
    return make({{"oid", TypeId::oid}, {"stxrelid", TypeId::oid}, {"stxname", TypeId::name},
                 {"stxnamespace", TypeId::oid}, {"stxowner", TypeId::oid}, {"stxstattarget", TypeId::int4},
                 {"stxkeys", TypeId::int2vector}, {"stxkind", TypeId::text_array}});
  }
  if (name == "pg_publication") {
    return make({{"oid", TypeId::oid}, {"pubname", TypeId::name}, {"pubowner", TypeId::oid},
                 {"puballtables", TypeId::boolean}, {"pubinsert", TypeId::boolean}, {"pubupdate", TypeId::boolean},
                 {"pubdelete", TypeId::boolean}, {"pubtruncate", TypeId::boolean}, {"pubviaroot", TypeId::boolean}});
  }
  if (name == "pg_publication_namespace") {
    return make({{"oid", TypeId::oid}, {"pnpubid", TypeId::oid}, {"pnnspid", TypeId::oid}});
  }
  if (name == "pg_publication_rel") {
    return make({{"oid", TypeId::oid}, {"prpubid", TypeId::oid}, {"prrelid", TypeId::oid}, {"prqual", TypeId::text},
                 {"prattrs", TypeId::int2vector}});
  }
  return make({});
}

bool is_empty_catalog(std::string_view name) {
  for (const char* n : {"pg_index", "pg_description", "pg_attrdef", "pg_constraint", "pg_inherits",
                        "pg_trigger", "pg_collation", "pg_policy",
                        "pg_statistic_ext", "pg_publication", "pg_publication_namespace", "pg_publication_rel",
                        "pg_sequence", "pg_depend", "pg_auth_members", "pg_default_acl", "pg_operator",
                        "pg_extension", "pg_tablespace", "pg_enum", "pg_language", "pg_rewrite"}) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

bool is_catalog_relation(std::string_view schema, std::string_view name) {
  if (is_tuning_cache_relation(schema, name)) return true;  // tune: the tuning cache view
  if (schema == "information_schema")
    return name == "tables" || name == "columns" || name == "schemata" || name == "table_constraints" ||
           name == "key_column_usage" || name == "sequences" || name == "views";
  if (!schema.empty() && schema != "pg_catalog") return false;
  for (const char* n : {"pg_type", "pg_namespace", "pg_class", "pg_attribute", "pg_database", "pg_roles", "pg_user",
                        "pg_authid", "pg_am", "pg_settings", "pg_tables", "pg_views", "pg_sequences", "pg_proc"}) {
    if (name == n) return true;
  }
  return is_empty_catalog(name) || is_other_catalog(name) || is_statio_relation(name) ||
         is_stat_activity_relation(name);
}

std::optional<Relation> build_relation(std::string_view schema, std::string_view name, const CatalogSource& source) {
  if (!is_catalog_relation(schema, name)) return std::nullopt;
  if (is_tuning_cache_relation(schema, name)) return tuning_cache_relation();
  if (schema == "information_schema") {
    if (name == "tables") return info_tables(source);
    if (name == "columns") return info_columns(source);
    if (name == "table_constraints") return table_constraints_relation(source);
    if (name == "key_column_usage") return key_column_usage_relation(source);
    if (name == "sequences") return info_sequences_relation(source);
    if (name == "views") return info_views_relation(source);
    return info_schemata(source);
  }
  if (name == "pg_type") return pg_type();
  if (name == "pg_namespace") return pg_namespace(source);
  if (name == "pg_class") return pg_class(source);
  if (name == "pg_attribute") return pg_attribute(source);
  if (name == "pg_database") return pg_database(source);
  if (name == "pg_roles") return role_relation(source, RoleRelation::roles);
  if (name == "pg_authid") return role_relation(source, RoleRelation::authid);
  if (name == "pg_user") return role_relation(source, RoleRelation::user);
  if (name == "pg_am") return pg_am();
  if (name == "pg_settings") return pg_settings_relation(source);
  if (is_statio_relation(name)) return statio_relation(name, source);
  if (is_stat_activity_relation(name)) return stat_activity_relation(name);
  if (name == "pg_tables") return pg_tables(source);
  if (name == "pg_views") return pg_views(source);
  if (name == "pg_constraint") return pg_constraint_relation(source);
  if (name == "pg_index") return pg_index_relation(source);
  if (name == "pg_sequence") return pg_sequence_relation(source);
  if (name == "pg_sequences") return pg_sequences_relation(source);
  if (name == "pg_attrdef") return pg_attrdef_relation(source);
  if (name == "pg_depend") return pg_depend_relation(source);
  if (name == "pg_rewrite") return pg_rewrite_relation(source);
  if (name == "pg_proc") return pg_proc_relation();
  if (name == "pg_cast") {
    Relation r = *other_catalog(name);
    for (const PostgresCast* c : supported_casts()) {
      r.rows.push_back({I(c->oid), I(c->source), I(c->target), I(c->function), C(c->context), C(c->method)});
    }
    return r;
  }
  if (name == "pg_init_privs") {
    Relation r = *other_catalog(name);
    r.rows.push_back({I(kPublicOid), I(2615), I(0), C('i'), S(kPublicAcl)});
    return r;
  }
  if (auto other = other_catalog(name)) return other;
  return empty_relation(name);
}

std::optional<int64_t> catalog_relation_oid(std::string_view name) {
  const SystemRelation* sys = find_system_relation(name);
  if (sys == nullptr || sys->namespace_oid != kPgCatalogOid) return std::nullopt;
  return sys->oid;
}

std::optional<std::string> catalog_relation_name(int64_t oid) {
  const SystemRelation* sys = find_system_relation(oid);
  if (sys == nullptr) return std::nullopt;
  if (sys->namespace_oid != kPgCatalogOid) return "information_schema." + std::string(sys->name);
  return std::string(sys->name);
}

std::optional<std::string> type_name_of(uint32_t type_oid) {
  const TypeRow* t = find_type(type_oid);
  return t == nullptr ? std::nullopt : std::optional<std::string>(std::string(t->name));
}

std::optional<uint32_t> type_oid_by_name(std::string_view name) {
  for (const auto& t : kTypes) {
    if (name == t.name) return t.oid;
  }
  return std::nullopt;
}

std::optional<std::string> namespace_name(int64_t oid) {
  for (const auto& n : kNamespaces) {
    if (n.oid == oid) return std::string(n.name);
  }
  return std::nullopt;
}

std::optional<int64_t> namespace_oid(std::string_view name) {
  for (const auto& n : kNamespaces) {
    if (n.name == name) return n.oid;
  }
  return std::nullopt;
}

}  // namespace tally::executor::introspection
