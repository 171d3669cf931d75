#include "executor/window_binder.hpp"

#include "common/error.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

// PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h), as libpg_query
// hands them over in WindowDef.frameOptions.
constexpr int kNonDefault = 0x1;
constexpr int kRange = 0x2;
constexpr int kRows = 0x4;
constexpr int kGroups = 0x8;
constexpr int kStartUnboundedPreceding = 0x20;
constexpr int kEndUnboundedFollowing = 0x100;
constexpr int kStartCurrentRow = 0x200;
constexpr int kEndCurrentRow = 0x400;
constexpr int kStartOffsetPreceding = 0x800;
constexpr int kEndOffsetPreceding = 0x1000;
constexpr int kStartOffsetFollowing = 0x2000;
constexpr int kEndOffsetFollowing = 0x4000;
constexpr int kExcludeCurrentRow = 0x8000;
constexpr int kExcludeGroup = 0x10000;
constexpr int kExcludeTies = 0x20000;
constexpr int kDefaultFrame = kRange | kStartUnboundedPreceding | kEndCurrentRow;

Error windowing(const std::string& message) { return Error(SqlState::windowing_error, message); }

WindowFrame::Bound start_bound(int o) {
  if (o & kStartUnboundedPreceding) return WindowFrame::Bound::unbounded_preceding;
  if (o & kStartCurrentRow) return WindowFrame::Bound::current_row;
  if (o & kStartOffsetPreceding) return WindowFrame::Bound::preceding;
  if (o & kStartOffsetFollowing) return WindowFrame::Bound::following;
  return WindowFrame::Bound::unbounded_preceding;
}

WindowFrame::Bound end_bound(int o) {
  if (o & kEndUnboundedFollowing) return WindowFrame::Bound::unbounded_following;
  if (o & kEndCurrentRow) return WindowFrame::Bound::current_row;
  if (o & kEndOffsetPreceding) return WindowFrame::Bound::preceding;
  if (o & kEndOffsetFollowing) return WindowFrame::Bound::following;
  return WindowFrame::Bound::current_row;
}

Error no_function(const std::string& name, const std::vector<ExprPtr>& args) {
  std::string sig = name + "(";
  for (size_t i = 0; i < args.size(); ++i) sig += (i ? ", " : "") + format_type(args[i]->type);
  return Error(SqlState::undefined_function, "function " + sig + ") does not exist")
      .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.");
}

WindowFunction function_of(const std::string& name) {
  static const std::pair<const char*, WindowFunction> names[] = {
      {"row_number", WindowFunction::row_number}, {"rank", WindowFunction::rank},
      {"dense_rank", WindowFunction::dense_rank}, {"percent_rank", WindowFunction::percent_rank},
      {"cume_dist", WindowFunction::cume_dist},   {"ntile", WindowFunction::ntile},
      {"lag", WindowFunction::lag},               {"lead", WindowFunction::lead},
      {"first_value", WindowFunction::first_value}, {"last_value", WindowFunction::last_value},
      {"nth_value", WindowFunction::nth_value}};
  for (const auto& [n, f] : names) {
    if (name == n) return f;
  }
  return WindowFunction::aggregate;
}

// Argument counts and casts of the non-aggregate window functions
// (PostgreSQL 15's pg_proc entries).
void bind_window_function(WindowCall& w, const std::string& name, BindContext& ctx) {
  auto& a = w.args;
  auto to = [&](size_t i, SqlType t) { a[i] = coerce_to(std::move(a[i]), t, CastContext::implicit, ctx); };
  auto resolve_unknown = [&](size_t i) {
    if (a[i]->type.id == TypeId::unknown) to(i, {TypeId::text});
  };
  switch (w.function) {
    case WindowFunction::row_number:
    case WindowFunction::rank:
    case WindowFunction::dense_rank:
      if (!a.empty()) throw no_function(name, a);
      w.type = {TypeId::int8};
      return;
    case WindowFunction::percent_rank:
    case WindowFunction::cume_dist:
      if (!a.empty()) throw no_function(name, a);
      w.type = {TypeId::float8};
      return;
    case WindowFunction::ntile:
      if (a.size() != 1) throw no_function(name, a);
      to(0, {TypeId::int4});
      w.type = {TypeId::int4};
      return;
    case WindowFunction::lag:
    case WindowFunction::lead: {
      if (a.empty() || a.size() > 3) throw no_function(name, a);
      if (a.size() == 3) {
        SqlType common = a[0]->type;
        if (a[0]->type.id == TypeId::unknown && a[2]->type.id == TypeId::unknown) common = {TypeId::text};
        else if (a[0]->type.id == TypeId::unknown) common = a[2]->type;
        else if (a[2]->type.id != TypeId::unknown && !(a[2]->type == a[0]->type)) common = common_supertype(a[0]->type, a[2]->type, name.c_str());
        to(0, common);
        to(2, common);
      }
      resolve_unknown(0);
      if (a.size() >= 2) to(1, {TypeId::int4});
      w.type = a[0]->type;
      return;
    }
    case WindowFunction::first_value:
    case WindowFunction::last_value:
      if (a.size() != 1) throw no_function(name, a);
      resolve_unknown(0);
      w.type = a[0]->type;
      return;
    case WindowFunction::nth_value:
      if (a.size() != 2) throw no_function(name, a);
      resolve_unknown(0);
      to(1, {TypeId::int4});
      w.type = a[0]->type;
      return;
    case WindowFunction::aggregate: return;
  }
}

}  // namespace

std::optional<SqlType> window_function_type(const std::string& name, std::vector<ExprPtr> args, BindContext& context) {
  WindowCall w;
  w.function = function_of(name);
  if (w.function == WindowFunction::aggregate) return std::nullopt;
  w.args = std::move(args);
  bind_window_function(w, name, context);
  return w.type;
}

struct WindowBinder::Definition {
  json partition = json::array();
  json order = json::array();
  int options = kDefaultFrame;
  json start_offset, end_offset;
};

Vector WindowResultExpr::evaluate(const EvalInput& input) const { return *input.columns.at(*base_ + call_); }

WindowBinder::WindowBinder(const json& select) {
  for (const auto& w : select.value("windowClause", json::array())) {
    const auto& def = w["WindowDef"];
    const std::string name = def.value("name", "");
    if (named_.count(name)) throw windowing("window \"" + name + "\" is already defined");
    named_[name] = def;
    named_order_.push_back(name);
  }
}

WindowBinder::Definition WindowBinder::resolve(const json& def, int depth) const {
  Definition d;
  if (def.contains("refname")) {
    const std::string ref = def["refname"].get<std::string>();
    auto it = named_.find(ref);
    if (it == named_.end() || depth > static_cast<int>(named_.size())) {
      throw Error(SqlState::undefined_object, "window \"" + ref + "\" does not exist");
    }
    d = resolve(it->second, depth + 1);
    if (def.contains("partitionClause")) throw windowing("cannot override PARTITION BY clause of window \"" + ref + "\"");
    if (def.contains("orderClause") && !d.order.empty()) {
      throw windowing("cannot override ORDER BY clause of window \"" + ref + "\"");
    }
    if (d.options & kNonDefault) {
      throw windowing("cannot copy window \"" + ref + "\" because it has a frame clause")
          .with_hint("Omit the parentheses in this OVER clause.");
    }
  } else {
    d.partition = def.value("partitionClause", json::array());
  }
  if (def.contains("orderClause")) d.order = def["orderClause"];
  d.options = def.value("frameOptions", kDefaultFrame);
  d.start_offset = def.value("startOffset", json());
  d.end_offset = def.value("endOffset", json());
  return d;
}

size_t WindowBinder::bind_spec(const json& over, const BindContext& scope) {
  Definition d;
  if (over.contains("name")) {
    const std::string name = over["name"].get<std::string>();
    auto it = named_.find(name);
    if (it == named_.end()) throw Error(SqlState::undefined_object, "window \"" + name + "\" does not exist");
    d = resolve(it->second, 0);
  } else {
    d = resolve(over, 0);
  }
  const std::string sort_key = strip_locations(d.partition).dump() + "|" + strip_locations(d.order).dump();
  const std::string key = sort_key + "|" + std::to_string(d.options) + "|" + strip_locations(d.start_offset).dump() +
                          "|" + strip_locations(d.end_offset).dump();
  for (size_t i = 0; i < spec_keys_.size(); ++i) {
    if (spec_keys_[i] == key) return i;
  }
  WindowSpec spec;
  spec.sort_group = sort_keys_.size();
  for (size_t i = 0; i < sort_keys_.size(); ++i) {
    if (sort_keys_[i] == sort_key) spec.sort_group = i;
  }
  if (spec.sort_group == sort_keys_.size()) sort_keys_.push_back(sort_key);

  BindContext ctx = scope;
  ctx.on_window = nullptr;
  ctx.window_forbidden_state = SqlState::windowing_error;
  ctx.window_forbidden_reason = "window functions are not allowed in window definitions";
  auto known = [&](ExprPtr e) {
    if (e->type.id == TypeId::unknown) e = coerce_to(std::move(e), {TypeId::text}, CastContext::implicit, ctx);
    return e;
  };
  for (const auto& p : d.partition) spec.partition.push_back(known(bind_expression(p, ctx)));
  for (const auto& o : d.order) {
    const auto& sb = o["SortBy"];
    const std::string dir = sb.value("sortby_dir", "SORTBY_DEFAULT");
    if (dir == "SORTBY_USING") throw Error(SqlState::feature_not_supported, "ORDER BY USING in a window is not supported");
    WindowOrder order;
    order.expr = known(bind_expression(sb["node"], ctx));
    order.descending = dir == "SORTBY_DESC";
    const std::string nulls = sb.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
    order.nulls_first = nulls == "SORTBY_NULLS_FIRST" || (nulls == "SORTBY_NULLS_DEFAULT" && order.descending);
    spec.order.push_back(std::move(order));
  }

  WindowFrame& f = spec.frame;
  const int o = d.options;
  f.mode = (o & kRows) ? WindowFrame::Mode::rows : (o & kGroups) ? WindowFrame::Mode::groups : WindowFrame::Mode::range;
  f.start = start_bound(o);
  f.end = end_bound(o);
  f.exclude = (o & kExcludeCurrentRow) ? WindowFrame::Exclude::current_row
            : (o & kExcludeGroup)      ? WindowFrame::Exclude::group
            : (o & kExcludeTies)       ? WindowFrame::Exclude::ties
                                       : WindowFrame::Exclude::none;
  const bool offsets = (o & (kStartOffsetPreceding | kStartOffsetFollowing | kEndOffsetPreceding | kEndOffsetFollowing)) != 0;
  if (f.mode == WindowFrame::Mode::groups && spec.order.empty()) throw windowing("GROUPS mode requires an ORDER BY clause");
  SqlType offset_type{TypeId::int8};
  if (f.mode == WindowFrame::Mode::range && offsets) {
    if (spec.order.size() != 1) throw windowing("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column");
    const SqlType t = spec.order[0].expr->type;
    if (is_integer(t.id)) offset_type = {TypeId::int8};
    else if (is_float(t.id)) offset_type = {TypeId::float8};
    else if (t.id == TypeId::numeric) offset_type = {TypeId::numeric};
    else if (t.id == TypeId::date || t.id == TypeId::timestamp || t.id == TypeId::timestamptz || t.id == TypeId::interval) {
      throw Error(SqlState::feature_not_supported, "RANGE with offset PRECEDING/FOLLOWING over " + format_type(t) + " is not supported");
    } else {
      throw Error(SqlState::undefined_function,
                  "RANGE with offset PRECEDING/FOLLOWING is not supported for column type " + format_type(t));
    }
  }
  // Offsets are constants: no column of any relation (PostgreSQL: 42P10).
  BindContext constant = ctx;
  constant.relations = nullptr;
  constant.columns.clear();
  constant.intercept = nullptr;
  constant.on_aggregate = nullptr;
  constant.outer_column = nullptr;
  constant.on_sublink = nullptr;
  auto offset = [&](const json& node) -> ExprPtr {
    if (node.is_null()) return nullptr;
    return coerce_to(bind_expression(node, constant), offset_type, CastContext::implicit, constant);
  };
  if (f.start == WindowFrame::Bound::preceding || f.start == WindowFrame::Bound::following) f.start_offset = offset(d.start_offset);
  if (f.end == WindowFrame::Bound::preceding || f.end == WindowFrame::Bound::following) f.end_offset = offset(d.end_offset);

  spec_keys_.push_back(key);
  plan_->specs.push_back(std::move(spec));
  return plan_->specs.size() - 1;
}

ExprPtr WindowBinder::bind(const json& call, const std::string& name, const BindContext& scope) {
  const json node = strip_locations(call);
  for (size_t i = 0; i < call_nodes_.size(); ++i) {
    if (call_nodes_[i] == node) return std::make_unique<WindowResultExpr>(plan_->calls[i].type, base_, i);
  }
  if (call.value("agg_within_group", false)) {
    throw Error(SqlState::feature_not_supported, "OVER is not supported for ordered-set aggregate " + name);
  }
  if (call.value("agg_distinct", false)) throw Error(SqlState::feature_not_supported, "DISTINCT is not implemented for window functions");
  if (call.contains("agg_order")) {
    throw Error(SqlState::feature_not_supported, "aggregate ORDER BY is not implemented for window functions");
  }
  BindContext ctx = scope;
  ctx.on_window = nullptr;
  ctx.window_forbidden_state = SqlState::windowing_error;
  ctx.window_forbidden_reason = "window function calls cannot be nested";
  WindowCall w;
  w.function = function_of(name);
  const bool star = call.value("agg_star", false);
  if (w.function == WindowFunction::aggregate) {
    if (!is_aggregate_name(name)) {
      throw Error(SqlState::wrong_object_type,
                  "OVER specified, but " + name + " is not a window function nor an aggregate function");
    }
    for (const auto& a : call.value("args", json::array())) w.args.push_back(bind_expression(a, ctx));
    if (const auto arity = ordered_input_arity(name); arity && w.args.size() != *arity) throw no_function(name, w.args);
    std::vector<SqlType> types;
    for (const auto& a : w.args) types.push_back(a->type);
    w.signature = resolve_aggregate(name, types, star, false);
    for (size_t i = 0; i < w.args.size(); ++i) {
      w.args[i] = coerce_to(std::move(w.args[i]), w.signature.arg_types[i], CastContext::implicit, ctx);
    }
    w.type = w.signature.result_type;
    if (call.contains("agg_filter")) {
      BindContext filter = ctx;
      filter.window_forbidden_reason = "window functions are not allowed in FILTER";
      w.filter = bind_condition(call["agg_filter"], filter, "FILTER");
    }
  } else {
    if (star) throw Error(SqlState::wrong_object_type, name + "(*) specified, but " + name + " is not an aggregate function");
    if (call.contains("agg_filter")) {
      throw Error(SqlState::feature_not_supported, "FILTER is not implemented for non-aggregate window functions");
    }
    for (const auto& a : call.value("args", json::array())) w.args.push_back(bind_expression(a, ctx));
    bind_window_function(w, name, ctx);
  }
  w.spec = bind_spec(call["over"], scope);
  call_nodes_.push_back(node);
  plan_->calls.push_back(std::move(w));
  return std::make_unique<WindowResultExpr>(plan_->calls.back().type, base_, plan_->calls.size() - 1);
}

std::function<ExprPtr(const json&, const std::string&)> WindowBinder::hook(const BindContext& scope) {
  return [this, &scope](const json& call, const std::string& name) { return bind(call, name, scope); };
}

std::shared_ptr<const WindowPlan> WindowBinder::finish(size_t base) {
  *base_ = base;
  plan_->sort_groups = sort_keys_.size();
  return plan_;
}

}  // namespace tally::executor
