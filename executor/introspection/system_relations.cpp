#include "executor/introspection/system_relations.hpp"

#include <array>

#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {
namespace {

constexpr int64_t kCat = kPgCatalogOid;
constexpr int64_t kInfo = kInformationSchemaOid;

// Values from a PostgreSQL 15 after initdb (SELECT oid, relname, relkind,
// reltype, relisshared FROM pg_class).
constexpr std::array<SystemRelation, 74> kRelations{{
    {826, "pg_default_acl", kCat, 'r', 10088, false},
    {1213, "pg_tablespace", kCat, 'r', 10056, true},
    {1247, "pg_type", kCat, 'r', 71, false},
    {1249, "pg_attribute", kCat, 'r', 75, false},
    {1255, "pg_proc", kCat, 'r', 81, false},
    {1259, "pg_class", kCat, 'r', 83, false},
    {1260, "pg_authid", kCat, 'r', 2842, true},
    {1261, "pg_auth_members", kCat, 'r', 2843, true},
    {1262, "pg_database", kCat, 'r', 1248, true},
    {2601, "pg_am", kCat, 'r', 10015, false},
    {2604, "pg_attrdef", kCat, 'r', 10001, false},
    {2224, "pg_sequence", kCat, 'r', 10105, false},
    {2606, "pg_constraint", kCat, 'r', 10003, false},
    {2608, "pg_depend", kCat, 'r', 10051, false},
    {2609, "pg_description", kCat, 'r', 10041, false},
    {2610, "pg_index", kCat, 'r', 10007, false},
    {2612, "pg_language", kCat, 'r', 10021, false},
    {2611, "pg_inherits", kCat, 'r', 10005, false},
    {2615, "pg_namespace", kCat, 'r', 10047, false},
    {2617, "pg_operator", kCat, 'r', 10009, false},
    {2620, "pg_trigger", kCat, 'r', 10037, false},
    {3256, "pg_policy", kCat, 'r', 10084, false},
    {3079, "pg_extension", kCat, 'r', 10074, false},
    {3381, "pg_statistic_ext", kCat, 'r', 10031, false},
    {3501, "pg_enum", kCat, 'r', 10045, false},
    {3456, "pg_collation", kCat, 'r', 10095, false},
    {6104, "pg_publication", kCat, 'r', 10107, false},
    {6106, "pg_publication_rel", kCat, 'r', 10111, false},
    {6237, "pg_publication_namespace", kCat, 'r', 10109, false},
    // The catalogs of other_catalogs.hpp.
    {3394, "pg_init_privs", kCat, 'r', 10090, false},
    {2605, "pg_cast", kCat, 'r', 10043, false},
    {3576, "pg_transform", kCat, 'r', 10103, false},
    {2616, "pg_opclass", kCat, 'r', 10013, false},
    {2753, "pg_opfamily", kCat, 'r', 10011, false},
    {3601, "pg_ts_parser", kCat, 'r', 10070, false},
    {3764, "pg_ts_template", kCat, 'r', 10072, false},
    {3600, "pg_ts_dict", kCat, 'r', 10068, false},
    {3602, "pg_ts_config", kCat, 'r', 10064, false},
    {2328, "pg_foreign_data_wrapper", kCat, 'r', 10076, false},
    {1417, "pg_foreign_server", kCat, 'r', 10078, false},
    {3118, "pg_foreign_table", kCat, 'r', 10082, false},
    {2607, "pg_conversion", kCat, 'r', 10049, false},
    {3541, "pg_range", kCat, 'r', 10101, false},
    {3466, "pg_event_trigger", kCat, 'r', 10039, false},
    {3350, "pg_partitioned_table", kCat, 'r', 10099, false},
    {2618, "pg_rewrite", kCat, 'r', 10035, false},
    {6100, "pg_subscription", kCat, 'r', 6101, true},
    {2995, "pg_largeobject_metadata", kCat, 'r', 10023, false},
    {2602, "pg_amop", kCat, 'r', 10017, false},
    {2603, "pg_amproc", kCat, 'r', 10019, false},
    {2964, "pg_db_role_setting", kCat, 'r', 10054, true},
    {12327, "pg_user_mappings", kCat, 'v', 12329, false},
    {3592, "pg_shseclabel", kCat, 'r', 4066, true},
    {3596, "pg_seclabel", kCat, 'r', 10092, false},
    {2396, "pg_shdescription", kCat, 'r', 10062, true},
    {2613, "pg_largeobject", kCat, 'r', 10025, false},
    {6243, "pg_parameter_acl", kCat, 'r', 10097, true},
    {12099, "pg_seclabels", kCat, 'v', 12101, false},
    {12000, "pg_roles", kCat, 'v', 12002, false},
    {12014, "pg_user", kCat, 'v', 12016, false},
    {12028, "pg_views", kCat, 'v', 12030, false},
    {12033, "pg_tables", kCat, 'v', 12035, false},
    {12048, "pg_sequences", kCat, 'v', 12050, false},
    {12104, "pg_settings", kCat, 'v', 12106, false},
    {12170, "pg_statio_all_tables", kCat, 'v', 12172, false},
    {12179, "pg_statio_user_tables", kCat, 'v', 12181, false},
    {12222, "pg_stat_activity", kCat, 'v', 12224, false},
    {13295, "columns", kInfo, 'v', 13297, false},
    {13329, "key_column_usage", kInfo, 'v', 13331, false},
    {13382, "schemata", kInfo, 'v', 13384, false},
    {13386, "sequences", kInfo, 'v', 13388, false},
    {13411, "table_constraints", kInfo, 'v', 13413, false},
    {13425, "tables", kInfo, 'v', 13427, false},
    {13483, "views", kInfo, 'v', 13485, false},
}};

}  // namespace

std::span<const SystemRelation> system_relations() { return kRelations; }

const SystemRelation* find_system_relation(std::string_view name) {
  for (const auto& r : kRelations) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

const SystemRelation* find_system_relation(int64_t oid) {
  for (const auto& r : kRelations) {
    if (r.oid == oid) return &r;
  }
  return nullptr;
}

}  // namespace tally::executor::introspection
