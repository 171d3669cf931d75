#include "executor/function_catalog.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "common/sql_type.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/binder.hpp"
#include "executor/project_set.hpp"
#include "executor/expression.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/settings.hpp"
#include "executor/window_binder.hpp"

namespace tally::executor {
namespace {

constexpr PostgresFunction kFunctions[] = {
#include "executor/postgres_functions.inc"
};

// PostgreSQL's polymorphic pseudo-types (pg_type.oid): "any", anyelement,
// anynonarray, anycompatible, anycompatiblenonarray; anyarray and
// anycompatiblearray.
bool is_array_polymorphic(uint32_t t) { return t == 2277 || t == 5078; }
bool is_polymorphic(uint32_t t) {
  return t == 2276 || t == 2283 || t == 2776 || t == 5077 || t == 5079 || is_array_polymorphic(t);
}

std::vector<uint32_t> oid_list(const char* text) {
  std::vector<uint32_t> oids;
  std::istringstream in(text);
  uint32_t oid;
  while (in >> oid) oids.push_back(oid);
  return oids;
}

// The concrete types a polymorphic signature is bound with: int4 for any
// element (when no array is among the arguments), else text and text[] (the
// one array type whose element type Tally calls with every function).
struct Substitution {
  SqlType element;
  std::optional<SqlType> array;
};
const Substitution kSubstitutions[] = {{{TypeId::int4}, std::nullopt}, {{TypeId::text}, SqlType{TypeId::text_array}}};

std::optional<std::vector<SqlType>> concrete_types(const std::vector<uint32_t>& oids, const Substitution& s) {
  std::vector<SqlType> types;
  for (const uint32_t t : oids) {
    if (is_array_polymorphic(t)) {
      if (!s.array) return std::nullopt;
      types.push_back(*s.array);
    } else if (is_polymorphic(t)) {
      types.push_back(s.element);
    } else if (const auto id = type_from_oid(t)) {
      types.push_back({*id});
    } else {
      return std::nullopt;
    }
  }
  return types;
}

// The result type the binder gives a call of f with arguments of these
// types (columns, or NULL constants for a function that wants constants);
// nullopt when it refuses the call. Binding has no side effects.
std::optional<SqlType> bound_result(const PostgresFunction& f, const std::vector<SqlType>& types, bool constants) {
  const Settings settings;
  BindContext context;
  context.settings = &settings;
  std::vector<ExprPtr> args;
  for (size_t i = 0; i < types.size(); ++i) {
    if (constants) args.push_back(std::make_unique<ConstExpr>(types[i], Null{}));
    else args.push_back(std::make_unique<ColumnExpr>(types[i], static_cast<int>(i)));
  }
  try {
    switch (f.kind) {
      case 'a': {
        if (!is_aggregate_name(f.name)) return std::nullopt;
        // An ordered-set aggregate's direct arguments come first; the binder
        // resolves it by the ones WITHIN GROUP orders.
        const bool within = f.aggregate_kind == 'o' || f.aggregate_kind == 'h';
        const size_t direct = within ? static_cast<size_t>(f.direct_args) : 0;
        if (direct > types.size()) return std::nullopt;
        const std::vector<SqlType> aggregated(types.begin() + static_cast<std::ptrdiff_t>(direct), types.end());
        return resolve_aggregate(f.name, aggregated, f.nargs == 0, within).result_type;
      }
      case 'w': return window_function_type(f.name, std::move(args), context);
      case 'f':
        if (f.retset) return set_returning_result(f.name, types);
        if (is_aggregate_name(f.name) || is_window_function_name(f.name)) return std::nullopt;
        return make_function(f.name, std::move(args), context)->type;
      default: return std::nullopt;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool supported(const PostgresFunction& f) {
  const std::vector<uint32_t> oids = oid_list(f.argtypes);
  const bool polymorphic = std::any_of(oids.begin(), oids.end(), is_polymorphic);
  for (const auto& s : kSubstitutions) {
    const auto types = concrete_types(oids, s);
    if (types) {
      for (const bool constants : {false, true}) {
        const auto result = bound_result(f, *types, constants);
        if (!result) continue;
        if (is_polymorphic(f.rettype) || type_oid(result->id) == f.rettype) return true;
        break;  // bound, but to another result type than PostgreSQL's
      }
    }
    if (!polymorphic) break;  // a concrete signature is bound once
  }
  return false;
}

}  // namespace

const std::vector<const PostgresFunction*>& supported_functions() {
  static const std::vector<const PostgresFunction*> rows = [] {
    std::vector<const PostgresFunction*> out;
    for (const auto& f : kFunctions) {
      if (supported(f)) out.push_back(&f);
    }
    return out;
  }();
  return rows;
}

const PostgresFunction* supported_function(uint32_t oid) {
  const auto& rows = supported_functions();
  const auto it = std::lower_bound(rows.begin(), rows.end(), oid,
                                   [](const PostgresFunction* f, uint32_t o) { return f->oid < o; });
  return it != rows.end() && (*it)->oid == oid ? *it : nullptr;
}

}  // namespace tally::executor
