#include "executor/introspection/key_relations.hpp"

namespace tally::executor::introspection {
namespace {

Value S(std::string s) { return Value{std::move(s)}; }
Value I(int64_t v) { return Value{v}; }
Value B(bool v) { return Value{v}; }
Value C(char c) { return Value{std::string(1, c)}; }
const Value kNull = Null{};

Relation make(std::initializer_list<std::pair<const char*, TypeId>> columns) {
  Relation r;
  for (const auto& [name, id] : columns) r.columns.push_back({name, SqlType{id}});
  return r;
}

// "1 3" (int2vector) or "{1,3}" (an array) of the key's attnums.
std::string attnums(const UserKey& key, bool array) {
  std::string out;
  for (const int c : key.columns) out += (out.empty() ? "" : (array ? "," : " ")) + std::to_string(c + 1);
  return array ? "{" + out + "}" : out;
}

// The default btree operator class of a column type (pg_opclass.oid in
// PostgreSQL 15; varchar indexes use text_ops).
int64_t btree_opclass(TypeId id) {
  switch (id) {
    case TypeId::boolean: return 10003;
    case TypeId::int2: return 1979;
    case TypeId::int4: return 1978;
    case TypeId::int8: return 3124;
    case TypeId::float4: return 10012;
    case TypeId::float8: return 3123;
    case TypeId::numeric: return 3125;
    case TypeId::bpchar: return 10004;
    case TypeId::date: return 3122;
    case TypeId::timestamp: return 3128;
    case TypeId::timestamptz: return 3127;
    case TypeId::time: return 10038;
    case TypeId::timetz: return 10041;
    case TypeId::bytea: return 10006;
    default: return 3126;  // text_ops
  }
}

}  // namespace

Relation pg_constraint_relation(const CatalogSource& source) {
  // pg_node_tree (conbin) is text.
  Relation r = make({{"oid", TypeId::oid}, {"conname", TypeId::name}, {"connamespace", TypeId::oid},
                     {"contype", TypeId::char_}, {"condeferrable", TypeId::boolean}, {"condeferred", TypeId::boolean},
                     {"convalidated", TypeId::boolean}, {"conrelid", TypeId::oid}, {"contypid", TypeId::oid},
                     {"conindid", TypeId::oid}, {"conparentid", TypeId::oid}, {"confrelid", TypeId::oid},
                     {"confupdtype", TypeId::char_}, {"confdeltype", TypeId::char_}, {"confmatchtype", TypeId::char_},
                     {"conislocal", TypeId::boolean}, {"coninhcount", TypeId::int4}, {"connoinherit", TypeId::boolean},
                     {"conkey", TypeId::int2_array}, {"confkey", TypeId::int2_array}, {"conbin", TypeId::text}});
  for (const auto& t : source.tables) {
    for (const auto& key : t.keys) {
      if (!key.constraint) continue;
      r.rows.push_back({I(key.oid), S(key.name), I(kPublicOid), C(key.primary ? 'p' : 'u'), B(false), B(false),
                        B(true), I(t.oid), I(0), I(key.index_oid), I(0), I(0), C(' '), C(' '), C(' '), B(true), I(0),
                        B(true), S(attnums(key, true)), kNull, kNull});
    }
  }
  return r;
}

Relation pg_index_relation(const CatalogSource& source) {
  Relation r = make({{"indexrelid", TypeId::oid}, {"indrelid", TypeId::oid}, {"indnatts", TypeId::int2},
                     {"indnkeyatts", TypeId::int2}, {"indisunique", TypeId::boolean},
                     {"indnullsnotdistinct", TypeId::boolean}, {"indisprimary", TypeId::boolean},
                     {"indisexclusion", TypeId::boolean}, {"indimmediate", TypeId::boolean},
                     {"indisclustered", TypeId::boolean}, {"indisvalid", TypeId::boolean}, {"indcheckxmin", TypeId::boolean},
                     {"indisready", TypeId::boolean}, {"indislive", TypeId::boolean}, {"indisreplident", TypeId::boolean},
                     {"indkey", TypeId::int2vector}, {"indcollation", TypeId::oidvector}, {"indclass", TypeId::oidvector},
                     {"indoption", TypeId::int2vector}, {"indexprs", TypeId::text}, {"indpred", TypeId::text}});
  for (const auto& t : source.tables) {
    for (const auto& key : t.keys) {
      const auto n = static_cast<int64_t>(key.columns.size());
      // indcollation: "default" (100) for text columns, 0 otherwise; indclass:
      // the default btree operator class of each column's type.
      std::string collations, classes, options;
      for (size_t i = 0; i < key.columns.size(); ++i) {
        const auto& col = t.columns[static_cast<size_t>(key.columns[i])];
        const std::string sep = i ? " " : "";
        collations += sep + (is_text_kind(col.type.id) ? "100" : "0");
        classes += sep + std::to_string(btree_opclass(col.type.id));
        options += sep + "0";
      }
      r.rows.push_back({I(key.index_oid), I(t.oid), I(n), I(n), B(key.unique), B(false), B(key.primary), B(false),
                        B(true), B(false), B(true), B(false), B(true), B(true), B(false), S(attnums(key, false)),
                        S(collations), S(classes), S(options), kNull, kNull});
    }
  }
  return r;
}

Relation table_constraints_relation(const CatalogSource& source) {
  // The NOT NULL "CHECK" rows PostgreSQL also lists here are left out.
  Relation r = make({{"constraint_catalog", TypeId::name}, {"constraint_schema", TypeId::name},
                     {"constraint_name", TypeId::name}, {"table_catalog", TypeId::name}, {"table_schema", TypeId::name},
                     {"table_name", TypeId::name}, {"constraint_type", TypeId::varchar},
                     {"is_deferrable", TypeId::varchar}, {"initially_deferred", TypeId::varchar},
                     {"enforced", TypeId::varchar}, {"nulls_distinct", TypeId::varchar}});
  for (const auto& t : source.tables) {
    for (const auto& key : t.keys) {
      if (!key.constraint) continue;
      r.rows.push_back({S(source.database), S(t.schema), S(key.name), S(source.database), S(t.schema), S(t.name),
                        S(key.primary ? "PRIMARY KEY" : "UNIQUE"), S("NO"), S("NO"), S("YES"), S("YES")});
    }
  }
  return r;
}

Relation key_column_usage_relation(const CatalogSource& source) {
  Relation r = make({{"constraint_catalog", TypeId::name}, {"constraint_schema", TypeId::name},
                     {"constraint_name", TypeId::name}, {"table_catalog", TypeId::name}, {"table_schema", TypeId::name},
                     {"table_name", TypeId::name}, {"column_name", TypeId::name}, {"ordinal_position", TypeId::int4},
                     {"position_in_unique_constraint", TypeId::int4}});
  for (const auto& t : source.tables) {
    for (const auto& key : t.keys) {
      if (!key.constraint) continue;
      for (size_t i = 0; i < key.columns.size(); ++i) {
        r.rows.push_back({S(source.database), S(t.schema), S(key.name), S(source.database), S(t.schema), S(t.name),
                          S(t.columns[static_cast<size_t>(key.columns[i])].name), I(static_cast<int64_t>(i + 1)),
                          kNull});
      }
    }
  }
  return r;
}

std::vector<Value> class_row(const Relation& pg_class, uint32_t oid, const std::string& name, char kind, int64_t natts,
                             int64_t am) {
  std::vector<Value> row(pg_class.columns.size(), kNull);
  for (size_t c = 0; c < pg_class.columns.size(); ++c) {
    const std::string& column = pg_class.columns[c].name;
    const TypeId type = pg_class.columns[c].type.id;
    Value v = kNull;
    if (column == "oid" || column == "relfilenode") v = I(oid);
    else if (column == "relname") v = S(name);
    else if (column == "relnamespace") v = I(kPublicOid);
    else if (column == "relowner") v = I(kBootstrapUserOid);
    else if (column == "relam") v = I(am);
    else if (column == "relpersistence") v = C('p');
    else if (column == "relkind") v = C(kind);
    else if (column == "relnatts") v = I(natts);
    else if (column == "reltuples") v = Value{-1.0};
    else if (column == "relreplident") v = C('n');
    else if (column == "relispopulated") v = B(true);
    else if (type == TypeId::boolean) v = B(false);
    else if (type == TypeId::oid || type == TypeId::int4 || type == TypeId::int2) v = I(0);
    row[c] = std::move(v);
  }
  return row;
}

void add_index_classes(Relation& pg_class, const CatalogSource& source) {
  for (const auto& t : source.tables) {
    for (const auto& key : t.keys) {
      // relam 403: btree, as PostgreSQL would have built it.
      pg_class.rows.push_back(
          class_row(pg_class, key.index_oid, key.name, 'i', static_cast<int64_t>(key.columns.size()), 403));
    }
  }
}

}  // namespace tally::executor::introspection
