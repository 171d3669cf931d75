#include "executor/operators/subquery_restriction.hpp"

#include <algorithm>
#include <set>

#include "executor/operators/chunk_ops.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"
#include "executor/subquery_expr.hpp"

namespace tally::executor {

namespace {

// Outer values up to which a grouped run is restricted to them (beyond,
// the whole grouped run costs about as much).
constexpr size_t kRestrictingRows = size_t{1} << 20;

void find_grouped_subqueries(Expr& e, std::vector<const SubqueryExpr*>& out) {
  if (const auto* s = dynamic_cast<const SubqueryExpr*>(&e); s && s->grouped) out.push_back(s);
  for_each_child(e, [&out](Expr& child) { find_grouped_subqueries(child, out); });
}

}  // namespace

void restrict_by_held_rows(const std::vector<ExprPtr>& residual, const PhysicalOperator& held,
                           const DataChunk& rows, size_t space_width, const ExecContext& context) {
  if (rows.rows == 0 || rows.rows > kRestrictingRows) return;
  std::vector<const SubqueryExpr*> subqueries;
  for (const auto& conjunct : residual) find_grouped_subqueries(*conjunct, subqueries);
  if (subqueries.empty()) return;
  const std::set<int> held_columns(held.layout().begin(), held.layout().end());
  const std::vector<Value> no_parameters;
  const std::vector<Value>& parameters = context.parameters ? *context.parameters : no_parameters;
  const EvalInput input = space_input(rows, held.layout(), space_width, context.parameters);
  for (const SubqueryExpr* s : subqueries) {
    bool held_only = true;
    for (const size_t slot : s->grouped->key_slots) {
      std::set<int> refs;
      collect_refs(*s->correlated[slot], refs);
      held_only = held_only && !refs.empty() &&
                  std::all_of(refs.begin(), refs.end(), [&](int c) { return held_columns.count(c) > 0; });
    }
    if (!held_only) continue;
    std::vector<Vector> keys;
    for (const size_t slot : s->grouped->key_slots) keys.push_back(s->correlated[slot]->evaluate(input));
    s->restrict_groups(parameters, std::move(keys));
  }
}

void restrict_by_join_keys(const std::vector<ExprPtr>& scan_filters, const std::vector<ExprPtr>& probe_keys,
                           const std::vector<Vector>& held_keys, const std::vector<Value>* parameters) {
  std::vector<const SubqueryExpr*> subqueries;
  for (const auto& conjunct : scan_filters) find_grouped_subqueries(*conjunct, subqueries);
  if (subqueries.empty()) return;
  const std::vector<Value> no_parameters;
  const std::vector<Value>& base = parameters ? *parameters : no_parameters;
  for (const SubqueryExpr* s : subqueries) {
    for (size_t i = 0; i < probe_keys.size() && i < held_keys.size(); ++i) {
      const auto* probe = dynamic_cast<const ColumnExpr*>(probe_keys[i].get());
      if (probe == nullptr || held_keys[i].count > kRestrictingRows) continue;
      const auto& slots = s->grouped->key_slots;
      const auto slot = std::find_if(slots.begin(), slots.end(), [&](size_t at) {
        const auto* key = dynamic_cast<const ColumnExpr*>(s->correlated[at].get());
        return key != nullptr && key->index == probe->index && key->type.id == held_keys[i].type.id;
      });
      if (slot == slots.end()) continue;
      s->restrict_groups(base, {held_keys[i]}, {static_cast<size_t>(slot - slots.begin())});
      break;
    }
  }
}

void restrict_by_in_lists(const std::vector<ExprPtr>& conjuncts, const std::vector<Value>* parameters) {
  std::vector<const SubqueryExpr*> subqueries;
  for (const auto& conjunct : conjuncts) find_grouped_subqueries(*conjunct, subqueries);
  if (subqueries.empty()) return;
  const std::vector<Value> no_parameters;
  const std::vector<Value>& base = parameters ? *parameters : no_parameters;
  for (const SubqueryExpr* s : subqueries) {
    for (const auto& conjunct : conjuncts) {
      const auto* in = dynamic_cast<const SubqueryExpr*>(conjunct.get());
      if (in == nullptr || in->kind != SubqueryKind::any || !in->hashable || !in->correlated.empty()) continue;
      const auto* tested = dynamic_cast<const ColumnExpr*>(in->left.get());
      if (tested == nullptr) continue;
      for (size_t k = 0; k < s->grouped->key_slots.size(); ++k) {
        const auto* key = dynamic_cast<const ColumnExpr*>(s->correlated[s->grouped->key_slots[k]].get());
        if (key == nullptr || key->index != tested->index) continue;
        const std::shared_ptr<const Vector> values = in->values_once(base);
        // The values stand for the group key only as the same type.
        if (values->type.id != key->type.id || values->count > kRestrictingRows) continue;
        s->restrict_groups(base, {*values}, {k});
        break;
      }
    }
  }
}

}  // namespace tally::executor
