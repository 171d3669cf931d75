#include "executor/expression_copy.hpp"

#include "executor/lookup_join.hpp"

namespace tally::executor {

ExprPtr ExprCopy::operator()(const Expr& e) {
  if (failed) return nullptr;
  if (replace) {
    if (ExprPtr r = replace(e)) return r;
    if (failed) return nullptr;
  }
  auto all = [&](const std::vector<ExprPtr>& from, std::vector<ExprPtr>& to) {
    for (const auto& a : from) {
      to.push_back((*this)(*a));
      if (!to.back()) return false;
    }
    return true;
  };
  ExprPtr out;
  if (const auto* c = dynamic_cast<const ConstExpr*>(&e)) {
    out = std::make_unique<ConstExpr>(c->type, c->value);
  } else if (const auto* p = dynamic_cast<const ParamExpr*>(&e)) {
    out = std::make_unique<ParamExpr>(p->type, p->index);
  } else if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) {
    out = std::make_unique<ColumnExpr>(c->type, c->index, c->name);
  } else if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
    std::vector<ExprPtr> args;
    if (all(f->args, args)) {
      auto g = std::make_unique<FunctionExpr>(f->type, f->name, std::move(args), f->fn, f->strict);
      g->batch = f->batch;
      g->batch_takes_constants = f->batch_takes_constants;
      g->like = f->like;
      out = std::move(g);
    }
  } else if (const auto* b = dynamic_cast<const BoolExpr*>(&e)) {
    std::vector<ExprPtr> args;
    if (all(b->args, args)) out = std::make_unique<BoolExpr>(b->op, std::move(args));
  } else if (const auto* n = dynamic_cast<const NullTestExpr*>(&e)) {
    if (ExprPtr arg = (*this)(*n->arg)) out = std::make_unique<NullTestExpr>(std::move(arg), n->is_not);
  } else if (const auto* c = dynamic_cast<const CaseExpr*>(&e)) {
    std::vector<std::pair<ExprPtr, ExprPtr>> whens;
    bool ok = true;
    for (const auto& [w, v] : c->whens) {
      ExprPtr cw = (*this)(*w);
      ExprPtr cv = cw ? (*this)(*v) : nullptr;
      ok = ok && cw && cv;
      whens.emplace_back(std::move(cw), std::move(cv));
    }
    ExprPtr otherwise = c->otherwise ? (*this)(*c->otherwise) : nullptr;
    if (ok && (otherwise || !c->otherwise)) out = std::make_unique<CaseExpr>(c->type, std::move(whens), std::move(otherwise));
  } else if (const auto* c = dynamic_cast<const CoalesceExpr*>(&e)) {
    std::vector<ExprPtr> args;
    if (all(c->args, args)) out = std::make_unique<CoalesceExpr>(c->type, std::move(args));
  } else if (const auto* i = dynamic_cast<const InListExpr*>(&e)) {
    ExprPtr arg = (*this)(*i->arg);
    std::vector<ExprPtr> list;
    if (arg && all(i->list, list)) out = std::make_unique<InListExpr>(std::move(arg), std::move(list), i->negated);
  } else if (const auto* l = dynamic_cast<const LookupExpr*>(&e)) {
    if (ExprPtr key = (*this)(*l->key)) out = std::make_unique<LookupExpr>(l->type, std::move(key), l->set, l->table, l->column, l->scale);
  }
  if (!out) failed = true;
  return out;
}

}  // namespace tally::executor
