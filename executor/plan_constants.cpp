#include "executor/plan_constants.hpp"

#include <functional>

#include "executor/select_plan_detail.hpp"

namespace tally::executor {
namespace {

struct CopyFailed {};

// Visits every expression the plan owns.
void for_each_root(const SelectPlan& plan, const std::function<void(const Expr&)>& visit) {
  const auto one = [&](const ExprPtr& e) {
    if (e) visit(*e);
  };
  one(plan.where);
  for (const auto& e : plan.group_keys) one(e);
  for (const auto& a : plan.aggregates) {
    for (const auto& e : a.args) one(e);
    one(a.filter);
    one(a.direct);
  }
  one(plan.having);
  for (const auto& e : plan.outputs) one(e);
  one(plan.limit);
  one(plan.offset);
}

void collect(const Expr& e, std::vector<const ConstExpr*>& out) {
  if (auto* k = dynamic_cast<const ConstExpr*>(&e)) {
    if (k->literal_location >= 0) out.push_back(k);
  } else if (auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
    for (const auto& a : f->args) collect(*a, out);
  } else if (auto* b = dynamic_cast<const BoolExpr*>(&e)) {
    for (const auto& a : b->args) collect(*a, out);
  } else if (auto* n = dynamic_cast<const NullTestExpr*>(&e)) {
    collect(*n->arg, out);
  } else if (auto* c = dynamic_cast<const CaseExpr*>(&e)) {
    for (const auto& [when, then] : c->whens) {
      collect(*when, out);
      collect(*then, out);
    }
    if (c->otherwise) collect(*c->otherwise, out);
  } else if (auto* c = dynamic_cast<const CoalesceExpr*>(&e)) {
    for (const auto& a : c->args) collect(*a, out);
  } else if (auto* in = dynamic_cast<const InListExpr*>(&e)) {
    collect(*in->arg, out);
    for (const auto& a : in->list) collect(*a, out);
  }
}

class Copier {
 public:
  explicit Copier(const std::vector<std::pair<int, int64_t>>& values) : values_(values) {}

  ExprPtr copy(const ExprPtr& e) { return e ? copy(*e) : nullptr; }

  ExprPtr copy(const Expr& e) {
    if (auto* k = dynamic_cast<const ConstExpr*>(&e)) {
      auto out = std::make_unique<ConstExpr>(k->type, k->value);
      out->literal_location = k->literal_location;
      for (const auto& [location, value] : values_) {
        if (k->literal_location != location || location < 0) continue;
        if (!std::holds_alternative<int64_t>(k->value) ||
            (k->type.id != TypeId::int4 && k->type.id != TypeId::int8)) {
          throw CopyFailed{};
        }
        out->value = value;
      }
      return out;
    }
    if (auto* p = dynamic_cast<const ParamExpr*>(&e)) return std::make_unique<ParamExpr>(p->type, p->index);
    if (auto* c = dynamic_cast<const ColumnExpr*>(&e)) return std::make_unique<ColumnExpr>(c->type, c->index, c->name);
    if (auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
      auto out = std::make_unique<FunctionExpr>(f->type, f->name, copy_all(f->args), f->fn, f->strict);
      out->batch = f->batch;
      return out;
    }
    if (auto* b = dynamic_cast<const BoolExpr*>(&e)) return std::make_unique<BoolExpr>(b->op, copy_all(b->args));
    if (auto* n = dynamic_cast<const NullTestExpr*>(&e)) return std::make_unique<NullTestExpr>(copy(n->arg), n->is_not);
    if (auto* c = dynamic_cast<const CaseExpr*>(&e)) {
      std::vector<std::pair<ExprPtr, ExprPtr>> whens;
      for (const auto& [when, then] : c->whens) whens.emplace_back(copy(when), copy(then));
      return std::make_unique<CaseExpr>(c->type, std::move(whens), copy(c->otherwise));
    }
    if (auto* c = dynamic_cast<const CoalesceExpr*>(&e)) return std::make_unique<CoalesceExpr>(c->type, copy_all(c->args));
    if (auto* in = dynamic_cast<const InListExpr*>(&e)) {
      return std::make_unique<InListExpr>(copy(in->arg), copy_all(in->list), in->negated);
    }
    throw CopyFailed{};  // a kind this file does not know: no copy rather than a wrong one
  }

  std::vector<ExprPtr> copy_all(const std::vector<ExprPtr>& list) {
    std::vector<ExprPtr> out;
    out.reserve(list.size());
    for (const auto& e : list) out.push_back(copy(e));
    return out;
  }

 private:
  const std::vector<std::pair<int, int64_t>>& values_;
};

}  // namespace

std::vector<const ConstExpr*> plan_literals(const SelectPlan& plan) {
  std::vector<const ConstExpr*> out;
  for_each_root(plan, [&](const Expr& e) { collect(e, out); });
  return out;
}

std::shared_ptr<const SelectPlan> plan_with_literals(const SelectPlan& plan,
                                                     const std::vector<std::pair<int, int64_t>>& values) {
  try {
    Copier c(values);
    auto out = std::make_shared<SelectPlan>();
    out->table = plan.table;
    out->scan_columns = plan.scan_columns;
    out->where = c.copy(plan.where);
    out->aggregate = plan.aggregate;
    out->group_keys = c.copy_all(plan.group_keys);
    out->aggregates.reserve(plan.aggregates.size());
    for (const auto& a : plan.aggregates) {
      AggregateCall call;
      call.name = a.name;
      call.signature = a.signature;
      call.args = c.copy_all(a.args);
      call.filter = c.copy(a.filter);
      call.direct = c.copy(a.direct);
      call.distinct = a.distinct;
      call.descending = a.descending;
      out->aggregates.push_back(std::move(call));
    }
    out->having = c.copy(plan.having);
    out->outputs = c.copy_all(plan.outputs);
    out->visible = plan.visible;
    out->names = plan.names;
    out->distinct = plan.distinct;
    out->sort = plan.sort;
    out->limit = c.copy(plan.limit);
    out->offset = c.copy(plan.offset);
    return out;
  } catch (const CopyFailed&) {
    return nullptr;
  }
}

}  // namespace tally::executor
