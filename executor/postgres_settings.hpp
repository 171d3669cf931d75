#pragma once
// PostgreSQL 15's run-time settings, as its pg_settings lists them (what SHOW
// ALL shows): the metadata and the value a fresh server shows. Generated from a
// real PostgreSQL 15 by scripts/generate_postgres_settings.py into
// postgres_settings.cpp; Tally's own values replace these where Tally has the
// setting (setting_registry.cpp, server_settings.cpp).
#include <span>

namespace tally::executor {

struct PostgresSetting {
  const char* name;
  const char* setting;     // pg_settings.setting: in the base unit
  const char* shown;       // what SHOW prints: in the largest unit that divides it
  const char* unit;        // nullptr: none; else "8kB", "kB", "MB", "B", "ms", "s" or "min"
  const char* category;
  const char* short_desc;
  const char* extra_desc;  // nullptr: none
  const char* context;     // internal, postmaster, sighup, superuser-backend, backend, superuser, user
  const char* vartype;     // bool, integer, real, string, enum
  const char* min_val;     // nullptr for bool, string and enum
  const char* max_val;
  const char* enumvals;    // "{a,b,c}"; nullptr unless enum
  const char* boot_val;    // nullptr where PostgreSQL computes it at start-up
  bool no_reset_all;       // RESET ALL leaves it (transaction_isolation, ...)
};

// Sorted by lower-case name, as SHOW ALL lists them.
std::span<const PostgresSetting> postgres_settings();

}  // namespace tally::executor
