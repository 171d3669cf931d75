#include "executor/introspection/sequence_relations.hpp"

#include "executor/introspection/key_relations.hpp"

namespace tally::executor::introspection {
namespace {

Value S(std::string s) { return Value{std::move(s)}; }
Value I(int64_t v) { return Value{v}; }
Value B(bool v) { return Value{v}; }
const Value kNull = Null{};

Relation make(std::initializer_list<std::pair<const char*, TypeId>> columns) {
  Relation r;
  for (const auto& [name, id] : columns) r.columns.push_back({name, SqlType{id}});
  return r;
}

}  // namespace

// pg_attrdef has an oid per default; Tally keeps none, so one is derived
// from the table's oid and the column (unique while the table exists).
int64_t attrdef_oid(uint32_t table_oid, size_t column) {
  return static_cast<int64_t>((uint64_t{table_oid} << 11 | column) & 0x7fffffff);
}

Relation pg_sequence_relation(const CatalogSource& source) {
  Relation r = make({{"seqrelid", TypeId::oid}, {"seqtypid", TypeId::oid}, {"seqstart", TypeId::int8},
                     {"seqincrement", TypeId::int8}, {"seqmax", TypeId::int8}, {"seqmin", TypeId::int8},
                     {"seqcache", TypeId::int8}, {"seqcycle", TypeId::boolean}});
  for (const auto& s : source.sequences) {
    r.rows.push_back({I(s.oid), I(type_oid(s.type.id)), I(s.start), I(s.increment), I(s.max), I(s.min), I(s.cache),
                      B(s.cycle)});
  }
  return r;
}

Relation pg_sequences_relation(const CatalogSource& source) {
  Relation r = make({{"schemaname", TypeId::name}, {"sequencename", TypeId::name}, {"sequenceowner", TypeId::name},
                     {"data_type", TypeId::regtype}, {"start_value", TypeId::int8}, {"min_value", TypeId::int8},
                     {"max_value", TypeId::int8}, {"increment_by", TypeId::int8}, {"cycle", TypeId::boolean},
                     {"cache_size", TypeId::int8}, {"last_value", TypeId::int8}});
  for (const auto& s : source.sequences) {
    r.rows.push_back({S(s.schema), S(s.name), S(source.user), I(type_oid(s.type.id)), I(s.start), I(s.min), I(s.max),
                      I(s.increment), B(s.cycle), I(s.cache), s.last_value ? I(*s.last_value) : kNull});
  }
  return r;
}

Relation info_sequences_relation(const CatalogSource& source) {
  Relation r = make({{"sequence_catalog", TypeId::name}, {"sequence_schema", TypeId::name},
                     {"sequence_name", TypeId::name}, {"data_type", TypeId::varchar},
                     {"numeric_precision", TypeId::int4}, {"numeric_precision_radix", TypeId::int4},
                     {"numeric_scale", TypeId::int4}, {"start_value", TypeId::varchar},
                     {"minimum_value", TypeId::varchar}, {"maximum_value", TypeId::varchar},
                     {"increment", TypeId::varchar}, {"cycle_option", TypeId::varchar}});
  for (const auto& s : source.sequences) {
    const int64_t bits = s.type.id == TypeId::int2 ? 16 : s.type.id == TypeId::int4 ? 32 : 64;
    r.rows.push_back({S(source.database), S(s.schema), S(s.name), S(format_type(s.type)), I(bits), I(2), I(0),
                      S(std::to_string(s.start)), S(std::to_string(s.min)), S(std::to_string(s.max)),
                      S(std::to_string(s.increment)), S(s.cycle ? "YES" : "NO")});
  }
  return r;
}

Relation pg_attrdef_relation(const CatalogSource& source) {
  // adbin is pg_node_tree in PostgreSQL; here the printed expression, which
  // pg_get_expr(adbin, adrelid) returns.
  Relation r = make({{"oid", TypeId::oid}, {"adrelid", TypeId::oid}, {"adnum", TypeId::int2}, {"adbin", TypeId::text}});
  for (const auto& t : source.tables) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const auto& col = t.columns[c];
      if (col.default_expr.empty() || col.identity) continue;  // identity columns have no pg_attrdef row
      r.rows.push_back({I(attrdef_oid(t.oid, c)), I(t.oid), I(static_cast<int64_t>(c + 1)), S(col.default_expr)});
    }
  }
  return r;
}

void add_sequence_classes(Relation& pg_class, const CatalogSource& source) {
  // relnatts 3: a sequence's last_value, log_cnt and is_called.
  for (const auto& s : source.sequences) pg_class.rows.push_back(class_row(pg_class, s.oid, s.name, 'S', 3, 0));
}

}  // namespace tally::executor::introspection
