#include "executor/introspection/settings_relation.hpp"

#include "executor/setting_registry.hpp"
#include "executor/setting_units.hpp"

namespace tally::executor::introspection {
namespace {

Value text_or_null(const char* s) { return s ? Value{std::string(s)} : Value{Null{}}; }

}  // namespace

Relation pg_settings_relation(const CatalogSource& source) {
  Relation r;
  const TypeId text = TypeId::text;
  for (const char* name : {"name", "setting", "unit", "category", "short_desc", "extra_desc", "context", "vartype",
                           "source", "min_val", "max_val", "enumvals", "boot_val", "reset_val", "sourcefile",
                           "sourceline", "pending_restart"}) {
    const std::string n = name;
    const TypeId id = n == "enumvals" ? TypeId::text_array : n == "sourceline" ? TypeId::int4
                      : n == "pending_restart" ? TypeId::boolean : text;
    r.columns.push_back({n, SqlType{id}});
  }
  for (const auto& s : source.settings) {
    const SettingDefinition* def = find_setting_definition(s.name);
    if (def && def->hidden) continue;
    const PostgresSetting* pg = def ? def->postgres : nullptr;
    const std::string unit = def ? def->unit : "";
    const bool real = def && def->kind == SettingDefinition::Kind::real;
    const std::string setting = in_base_unit(s.value, unit, real);
    const std::string reset = in_base_unit(s.default_value, unit, real);
    // Tally's compiled-in default; NULL where PostgreSQL computes it and Tally has none.
    const std::string boot_text = def ? in_base_unit(def->default_value, unit, real) : reset;
    const Value boot = pg && !pg->boot_val && boot_text.empty() ? Value{Null{}} : Value{boot_text};
    const char* source_name = setting != reset ? "session" : reset != boot_text ? "configuration file" : "default";
    r.rows.push_back({Value{s.name}, Value{setting}, text_or_null(pg ? pg->unit : nullptr),
                      Value{std::string(pg ? pg->category : "Customized Options")},
                      Value{pg ? std::string(pg->short_desc) : s.description}, text_or_null(pg ? pg->extra_desc : nullptr),
                      Value{std::string(pg ? pg->context : "user")}, Value{std::string(pg ? pg->vartype : "string")},
                      Value{std::string(source_name)}, text_or_null(pg ? pg->min_val : nullptr),
                      text_or_null(pg ? pg->max_val : nullptr), text_or_null(pg ? pg->enumvals : nullptr), boot,
                      Value{reset}, Value{Null{}}, Value{Null{}}, Value{false}});
  }
  return r;
}

}  // namespace tally::executor::introspection
