#include "executor/introspection/other_catalogs.hpp"

#include <utility>
#include <vector>

namespace tally::executor::introspection {
namespace {

using Columns = std::vector<std::pair<const char*, TypeId>>;

struct OtherCatalog {
  const char* name;
  Columns columns;
};

constexpr TypeId kOid = TypeId::oid, kName = TypeId::name, kChar = TypeId::char_,
                 kBool = TypeId::boolean, kText = TypeId::text, kInt2 = TypeId::int2,
                 kInt4 = TypeId::int4, kProc = TypeId::regproc, kTextArray = TypeId::text_array;

// PostgreSQL 15's column lists. aclitem[] columns are text[] here,
// pg_node_tree and pg_lsn columns text, in the same text form.
const std::vector<OtherCatalog>& catalogs() {
  static const std::vector<OtherCatalog> all = {
      {"pg_init_privs",
       {{"objoid", kOid},
        {"classoid", kOid},
        {"objsubid", kInt4},
        {"privtype", kChar},
        {"initprivs", kTextArray}}},
      {"pg_cast",
       {{"oid", kOid},
        {"castsource", kOid},
        {"casttarget", kOid},
        {"castfunc", kOid},
        {"castcontext", kChar},
        {"castmethod", kChar}}},
      {"pg_transform",
       {{"oid", kOid},
        {"trftype", kOid},
        {"trflang", kOid},
        {"trffromsql", kProc},
        {"trftosql", kProc}}},
      {"pg_opclass",
       {{"oid", kOid},
        {"opcmethod", kOid},
        {"opcname", kName},
        {"opcnamespace", kOid},
        {"opcowner", kOid},
        {"opcfamily", kOid},
        {"opcintype", kOid},
        {"opcdefault", kBool},
        {"opckeytype", kOid}}},
      {"pg_opfamily",
       {{"oid", kOid},
        {"opfmethod", kOid},
        {"opfname", kName},
        {"opfnamespace", kOid},
        {"opfowner", kOid}}},
      {"pg_ts_parser",
       {{"oid", kOid},
        {"prsname", kName},
        {"prsnamespace", kOid},
        {"prsstart", kProc},
        {"prstoken", kProc},
        {"prsend", kProc},
        {"prsheadline", kProc},
        {"prslextype", kProc}}},
      {"pg_ts_template",
       {{"oid", kOid},
        {"tmplname", kName},
        {"tmplnamespace", kOid},
        {"tmplinit", kProc},
        {"tmpllexize", kProc}}},
      {"pg_ts_dict",
       {{"oid", kOid},
        {"dictname", kName},
        {"dictnamespace", kOid},
        {"dictowner", kOid},
        {"dicttemplate", kOid},
        {"dictinitoption", kText}}},
      {"pg_ts_config",
       {{"oid", kOid},
        {"cfgname", kName},
        {"cfgnamespace", kOid},
        {"cfgowner", kOid},
        {"cfgparser", kOid}}},
      {"pg_foreign_data_wrapper",
       {{"oid", kOid},
        {"fdwname", kName},
        {"fdwowner", kOid},
        {"fdwhandler", kOid},
        {"fdwvalidator", kOid},
        {"fdwacl", kTextArray},
        {"fdwoptions", kTextArray}}},
      {"pg_foreign_server",
       {{"oid", kOid},
        {"srvname", kName},
        {"srvowner", kOid},
        {"srvfdw", kOid},
        {"srvtype", kText},
        {"srvversion", kText},
        {"srvacl", kTextArray},
        {"srvoptions", kTextArray}}},
      {"pg_foreign_table", {{"ftrelid", kOid}, {"ftserver", kOid}, {"ftoptions", kTextArray}}},
      {"pg_conversion",
       {{"oid", kOid},
        {"conname", kName},
        {"connamespace", kOid},
        {"conowner", kOid},
        {"conforencoding", kInt4},
        {"contoencoding", kInt4},
        {"conproc", kProc},
        {"condefault", kBool}}},
      {"pg_range",
       {{"rngtypid", kOid},
        {"rngsubtype", kOid},
        {"rngmultitypid", kOid},
        {"rngcollation", kOid},
        {"rngsubopc", kOid},
        {"rngcanonical", kProc},
        {"rngsubdiff", kProc}}},
      {"pg_event_trigger",
       {{"oid", kOid},
        {"evtname", kName},
        {"evtevent", kName},
        {"evtowner", kOid},
        {"evtfoid", kOid},
        {"evtenabled", kChar},
        {"evttags", kTextArray}}},
      {"pg_partitioned_table",
       {{"partrelid", kOid},
        {"partstrat", kChar},
        {"partnatts", kInt2},
        {"partdefid", kOid},
        {"partattrs", TypeId::int2vector},
        {"partclass", TypeId::oidvector},
        {"partcollation", TypeId::oidvector},
        {"partexprs", kText}}},
      {"pg_subscription",
       {{"oid", kOid},
        {"subdbid", kOid},
        {"subskiplsn", kText},
        {"subname", kName},
        {"subowner", kOid},
        {"subenabled", kBool},
        {"subbinary", kBool},
        {"substream", kBool},
        {"subtwophasestate", kChar},
        {"subdisableonerr", kBool},
        {"subconninfo", kText},
        {"subslotname", kName},
        {"subsynccommit", kText},
        {"subpublications", kTextArray}}},
      // Per-database and per-role settings (ALTER ROLE ... SET): Tally has none.
      {"pg_db_role_setting", {{"setdatabase", kOid}, {"setrole", kOid}, {"setconfig", kTextArray}}},
      // The user mappings of foreign servers: Tally defines no foreign servers.
      {"pg_user_mappings",
       {{"umid", kOid},
        {"srvid", kOid},
        {"srvname", kName},
        {"umuser", kOid},
        {"usename", kName},
        {"umoptions", kTextArray}}},
      // Security labels and comments on shared objects: Tally has no SECURITY
      // LABEL, and its shared objects (the database, roles) carry no comment.
      {"pg_shseclabel", {{"objoid", kOid}, {"classoid", kOid}, {"provider", kText}, {"label", kText}}},
      {"pg_seclabel",
       {{"objoid", kOid}, {"classoid", kOid}, {"objsubid", kInt4}, {"provider", kText}, {"label", kText}}},
      {"pg_shdescription", {{"objoid", kOid}, {"classoid", kOid}, {"description", kText}}},
      // Large objects' data: Tally stores none (lo_import and friends are not there).
      {"pg_largeobject", {{"loid", kOid}, {"pageno", kInt4}, {"data", TypeId::bytea}}},
      // Privileges granted on settings (GRANT SET ON PARAMETER): Tally has none (pg_dumpall reads it).
      {"pg_parameter_acl", {{"oid", kOid}, {"parname", kText}, {"paracl", kTextArray}}},
      {"pg_largeobject_metadata", {{"oid", kOid}, {"lomowner", kOid}, {"lomacl", kTextArray}}},
      {"pg_amop",
       {{"oid", kOid},
        {"amopfamily", kOid},
        {"amoplefttype", kOid},
        {"amoprighttype", kOid},
        {"amopstrategy", kInt2},
        {"amoppurpose", kChar},
        {"amopopr", kOid},
        {"amopmethod", kOid},
        {"amopsortfamily", kOid}}},
      {"pg_amproc",
       {{"oid", kOid},
        {"amprocfamily", kOid},
        {"amproclefttype", kOid},
        {"amprocrighttype", kOid},
        {"amprocnum", kInt2},
        {"amproc", kProc}}},
      {"pg_seclabels",
       {{"objoid", kOid},
        {"classoid", kOid},
        {"objsubid", kInt4},
        {"objtype", kText},
        {"objnamespace", kOid},
        {"objname", kText},
        {"provider", kText},
        {"label", kText}}},
  };
  return all;
}

const OtherCatalog* find(std::string_view name) {
  for (const auto& c : catalogs()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace

bool is_other_catalog(std::string_view name) { return find(name) != nullptr; }

std::optional<Relation> other_catalog(std::string_view name) {
  const OtherCatalog* c = find(name);
  if (c == nullptr) return std::nullopt;
  Relation r;
  for (const auto& [column, type] : c->columns) r.columns.push_back({column, SqlType{type}});
  return r;
}

}  // namespace tally::executor::introspection
