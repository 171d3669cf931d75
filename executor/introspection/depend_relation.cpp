#include "executor/introspection/depend_relation.hpp"

#include "executor/dml/column_default.hpp"
#include "executor/introspection/sequence_relations.hpp"
#include "executor/introspection/view_relations.hpp"

namespace tally::executor::introspection {
namespace {

// pg_class, pg_attrdef, pg_rewrite, pg_language and pg_extension, the catalogs the rows' objects live in.
constexpr int64_t kPgClassOid = 1259;
constexpr int64_t kPgAttrdefOid = 2604;
constexpr int64_t kPgRewriteOid = 2618;
constexpr int64_t kPgLanguageOid = 2612;
constexpr int64_t kPgExtensionOid = 3079;
// plpgsql's language and extension, as pg_language and pg_extension list them.
constexpr int64_t kPlpgsqlLanguageOid = 13563;
constexpr int64_t kPlpgsqlExtensionOid = 13559;
constexpr int64_t kPgProcOid = 1255;
constexpr int64_t kPlpgsqlHandlerOids[] = {13560, 13561, 13562};  // call, inline, validator

const UserSequence* sequence_named(const CatalogSource& source, const std::string& name) {
  for (const auto& s : source.sequences) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const UserColumn* owner_column(const CatalogSource& source, const UserSequence& s) {
  for (const auto& t : source.tables) {
    if (t.oid == s.owner_table && s.owner_column >= 0 &&
        static_cast<size_t>(s.owner_column) < t.columns.size())
      return &t.columns[static_cast<size_t>(s.owner_column)];
  }
  return nullptr;
}

}  // namespace

Relation pg_depend_relation(const CatalogSource& source) {
  Relation r;
  for (const auto& [name, type] : {std::pair{"classid", TypeId::oid},
                                   {"objid", TypeId::oid},
                                   {"objsubid", TypeId::int4},
                                   {"refclassid", TypeId::oid},
                                   {"refobjid", TypeId::oid},
                                   {"refobjsubid", TypeId::int4},
                                   {"deptype", TypeId::char_}}) {
    r.columns.push_back({name, SqlType{type}});
  }
  auto add_row = [&r](int64_t classid, int64_t objid, int64_t refclassid, int64_t refobjid, int64_t refobjsubid,
                      char deptype) {
    r.rows.push_back({Value{classid}, Value{objid}, Value{int64_t{0}}, Value{refclassid},
                      Value{refobjid}, Value{refobjsubid}, Value{std::string(1, deptype)}});
  };
  auto add = [&add_row](int64_t classid, int64_t objid, int64_t refobjid, int64_t refobjsubid, char deptype) {
    add_row(classid, objid, kPgClassOid, refobjid, refobjsubid, deptype);
  };
  // The plpgsql extension's members (psql's \dx+): its language and the
  // language's handlers (named by pg_language, not listed in pg_proc: Tally runs no PL/pgSQL).
  add_row(kPgLanguageOid, kPlpgsqlLanguageOid, kPgExtensionOid, kPlpgsqlExtensionOid, 0, 'e');
  for (const int64_t handler : kPlpgsqlHandlerOids) add_row(kPgProcOid, handler, kPgExtensionOid, kPlpgsqlExtensionOid, 0, 'e');
  for (const auto& t : source.tables) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const auto& col = t.columns[c];
      if (col.default_expr.empty() || col.identity) continue;  // as pg_attrdef lists them
      const int64_t attrdef = attrdef_oid(t.oid, c);
      add(kPgAttrdefOid, attrdef, t.oid, static_cast<int64_t>(c + 1), 'a');
      if (const UserSequence* s = sequence_named(source, dml::nextval_sequence(col.default_expr)))
        add(kPgAttrdefOid, attrdef, s->oid, 0, 'n');
    }
  }
  for (const auto& s : source.sequences) {
    const UserColumn* owner = owner_column(source, s);
    if (owner == nullptr) continue;
    add(kPgClassOid, s.oid, s.owner_table, s.owner_column + 1, owner->identity ? 'i' : 'a');
  }
  // A view's rule is part of the view ('i') and reads its relations ('n');
  // PostgreSQL lists one row per column read, Tally knows the relations
  // (refobjsubid 0).
  for (const auto& v : source.views) {
    const int64_t rule = view_rule_oid(v.oid);
    add(kPgRewriteOid, rule, v.oid, 0, 'i');
    for (const uint32_t read : v.depends) add(kPgRewriteOid, rule, read, 0, 'n');
  }
  return r;
}

}  // namespace tally::executor::introspection
