#include "executor/operator_catalog.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>

#include "common/sql_type.hpp"
#include "executor/binder.hpp"
#include "executor/expression.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/settings.hpp"

namespace tally::executor {
namespace {

constexpr PostgresOperator kOperators[] = {
#include "executor/postgres_operators.inc"
};

// The result type the binder gives the operator on columns of its operand
// types; nullopt when it refuses them.
std::optional<TypeId> bound_result(const PostgresOperator& o) {
  const auto right = type_from_oid(o.right);
  const auto left = o.kind == 'l' ? std::optional<TypeId>(TypeId::unknown) : type_from_oid(o.left);
  if (!left || !right) return std::nullopt;
  const Settings settings;
  BindContext context;
  context.settings = &settings;
  try {
    if (o.kind == 'l') return make_unary_operator(o.name, std::make_unique<ColumnExpr>(SqlType{*right}, 0), context)->type.id;
    return make_binary_operator(o.name, std::make_unique<ColumnExpr>(SqlType{*left}, 0),
                                std::make_unique<ColumnExpr>(SqlType{*right}, 1), context)->type.id;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool supported(const PostgresOperator& o) {
  const auto result = bound_result(o);
  return result && type_oid(*result) == o.result;
}

}  // namespace

const std::vector<const PostgresOperator*>& supported_operators() {
  static const std::vector<const PostgresOperator*> rows = [] {
    std::vector<const PostgresOperator*> out;
    for (const auto& o : kOperators) {
      if (supported(o)) out.push_back(&o);
    }
    return out;
  }();
  return rows;
}

const PostgresOperator* supported_operator(uint32_t oid) {
  const auto& rows = supported_operators();
  const auto it = std::lower_bound(rows.begin(), rows.end(), oid,
                                   [](const PostgresOperator* o, uint32_t v) { return o->oid < v; });
  return it != rows.end() && (*it)->oid == oid ? *it : nullptr;
}

const PostgresOperator* operator_with_code(uint32_t function_oid) {
  for (const PostgresOperator* o : supported_operators()) {
    if (o->code == function_oid) return o;
  }
  return nullptr;
}

}  // namespace tally::executor
