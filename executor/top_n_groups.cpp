#include "executor/top_n_groups.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "common/error.hpp"
#include "common/ordered_pick.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/database.hpp"
#include "executor/group_aggregator.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

namespace {

using nlohmann::json;

int column_of(const Expr& e) {
  const auto* c = dynamic_cast<const ColumnExpr*>(&e);
  return c != nullptr ? c->index : -1;
}

json name_node(const std::string& name) { return json{{"String", {{"sval", name}}}}; }
json column_ref(const std::string& name) { return json{{"ColumnRef", {{"fields", json::array({name_node(name)})}}}}; }
json target(json value) { return json{{"ResTarget", {{"val", std::move(value)}}}}; }

json count_call(const json* argument) {
  json call{{"funcname", json::array({name_node("count")})}};
  if (argument != nullptr) call["args"] = json::array({*argument});
  else call["agg_star"] = true;
  return json{{"FuncCall", std::move(call)}};
}

// Orders the engines keep as ordered values (engine_aggregator.cpp's
// mapping); others would take the generic path, slower than the CPU top-n.
// Whether a WHERE conjunct is `<name> IS NOT NULL` (a bare column name).
bool not_null_test_of(const json& conjunct, const std::string& name) {
  if (!conjunct.contains("NullTest")) return false;
  const json& test = conjunct["NullTest"];
  if (test.value("nulltesttype", "") != "IS_NOT_NULL" || !test.contains("arg") || !test["arg"].contains("ColumnRef")) return false;
  const json& fields = test["arg"]["ColumnRef"]["fields"];
  return !fields.empty() && fields.back().contains("String") && fields.back()["String"].value("sval", "") == name;
}

bool engine_orderable(SqlType type) {
  const Physical p = physical_of(type.id);
  return p == Physical::integer || p == Physical::floating;
}

}  // namespace

std::optional<TopNGroups> plan_top_n_groups(const json& select, const PlanContext& context, const PhysicalOperator& child,
                                            const WindowPlan& windows, size_t call, int64_t k) {
  if (k < 1 || k > kMaxTopNGroupRanks || call >= windows.calls.size()) return std::nullopt;
  for (const WindowCall& c : windows.calls) {
    if (c.function != WindowFunction::row_number) return std::nullopt;
  }
  const WindowSpec& spec = windows.specs[windows.calls[call].spec];
  if (spec.partition.empty() || spec.order.size() != 1 || !engine_orderable(spec.order[0].expr->type)) return std::nullopt;
  for (const char* clause : {"groupClause", "havingClause", "withClause", "distinctClause"}) {
    if (select.contains(clause)) return std::nullopt;
  }
  if (!select.contains("fromClause") || select["fromClause"].size() != 1 || !select["fromClause"][0].contains("RangeVar")) {
    return std::nullopt;
  }
  // Each column of the rows is a partition key or the ORDER BY column.
  TopNGroups groups;
  groups.keys = spec.partition.size();
  groups.k = k;
  groups.nulls_first = spec.order[0].nulls_first;
  const std::vector<int>& layout = child.layout();
  const std::vector<OutputColumn>& columns = child.columns();
  std::vector<int> key_at(groups.keys, -1);
  int order_at = -1;
  for (size_t i = 0; i < layout.size() && i < columns.size(); ++i) {
    int source = -2;
    for (size_t p = 0; p < groups.keys && source == -2; ++p) {
      if (column_of(*spec.partition[p]) == layout[i]) source = static_cast<int>(p);
    }
    if (source == -2 && column_of(*spec.order[0].expr) == layout[i]) source = -1;
    if (source == -2) return std::nullopt;
    groups.child_source.push_back(source);
    (source >= 0 ? key_at[static_cast<size_t>(source)] : order_at) = static_cast<int>(i);
  }
  if (order_at < 0 || std::find(key_at.begin(), key_at.end(), -1) != key_at.end()) return std::nullopt;

  // SELECT p..., count(*), count(o) FROM <the table> WHERE <its WHERE> GROUP BY p...
  json query{{"targetList", json::array()}, {"groupClause", json::array()}, {"fromClause", select["fromClause"]},
             {"limitOption", "LIMIT_OPTION_DEFAULT"}, {"op", "SETOP_NONE"}};
  for (const int at : key_at) {
    query["targetList"].push_back(target(column_ref(columns[static_cast<size_t>(at)].name)));
    query["groupClause"].push_back(column_ref(columns[static_cast<size_t>(at)].name));
  }
  const json order = column_ref(columns[static_cast<size_t>(order_at)].name);
  query["targetList"].push_back(target(count_call(nullptr)));
  query["targetList"].push_back(target(count_call(&order)));
  // `o IS NOT NULL` among the WHERE's conjuncts is left out: the ordered
  // values never hold a NULL, so the groups need only count(o) (a row whose
  // o is NULL is then as absent as the filter made it). A WHERE the engines
  // would evaluate on the host row by row is then often no WHERE at all.
  if (select.contains("whereClause")) {
    std::vector<json> conjuncts, kept;
    split_and(select["whereClause"], conjuncts);
    for (json& c : conjuncts) {
      if (not_null_test_of(c, columns[static_cast<size_t>(order_at)].name)) groups.values_only = true;
      else kept.push_back(std::move(c));
    }
    if (kept.size() == 1) query["whereClause"] = std::move(kept[0]);
    if (kept.size() > 1) query["whereClause"] = json{{"BoolExpr", {{"boolop", "AND_EXPR"}, {"args", std::move(kept)}}}};
  }
  PlanContext inner = context;
  std::shared_ptr<const SelectPlan> planned;
  try {
    planned = plan_select(query, inner);
  } catch (const Error&) {
    return std::nullopt;  // the window's own plan stands
  }
  if (!planned->table || planned->source || !planned->aggregate || planned->group_keys.size() != groups.keys ||
      planned->aggregates.size() != 2 || planned->aggregates[1].args.size() != 1) {
    return std::nullopt;
  }
  const auto* o = dynamic_cast<const ColumnExpr*>(planned->aggregates[1].args[0].get());
  if (o == nullptr || o->type.id != columns[static_cast<size_t>(order_at)].type.id) return std::nullopt;
  // Made here and shared with no one yet: the ranks' aggregates join it.
  auto plan = std::const_pointer_cast<SelectPlan>(planned);
  for (int64_t j = 0; j < k; ++j) {
    AggregateCall nth;
    nth.name = "nth";
    nth.signature = AggregateSignature{AggKind::ordered_nth, {o->type}, o->type};
    nth.args.push_back(std::make_unique<ColumnExpr>(o->type, o->index, o->name));
    nth.direct = std::make_unique<ConstExpr>(SqlType{TypeId::int8}, Value{j});
    nth.descending = spec.order[0].descending;
    plan->aggregates.push_back(std::move(nth));
    plan->outputs.push_back(std::make_unique<ColumnExpr>(o->type, static_cast<int>(groups.keys + plan->aggregates.size() - 1)));
    plan->names.push_back("nth");
  }
  plan->visible = plan->outputs.size();
  groups.plan = std::move(plan);
  return groups;
}

bool top_n_groups_pays(const TopNGroups& groups, const ExecContext& context) {
  if (context.engine == "gpu") return true;
  // Ranks that fit a top-codes table: the CPU engine keeps them as the rows
  // pass too (cpu/top_codes_rows.hpp).
  if (groups.k <= kMaxTopCodes) return context.engine != "generic";
  if (context.engine != "auto") return false;
  if (context.gpu_engine != nullptr) return true;
  const auto* table = dynamic_cast<const EngineTableSnapshot*>(groups.plan->table.get());
  return table != nullptr && table->gpu_engine() != nullptr;
}

DataChunk run_top_n_groups(const TopNGroups& groups, ExecContext& context, size_t calls, std::vector<std::string>* explain) {
  ExecContext inner = context;
  inner.stream_to_client = false;  // plain Vectors, whatever the statement streams
  inner.explain = explain;
  ResultSet result = run_select(*groups.plan, inner);
  const auto unfold_start = std::chrono::steady_clock::now();
  const size_t count = result.rows;
  const int64_t* all = result.columns[groups.keys].int_data();
  const int64_t* values = result.columns[groups.keys + 1].int_data();
  if (static_cast<uint64_t>(groups.k) * count >= kNullRow) {
    throw Error(SqlState::program_limit_exceeded, "too many partitions for a top-n by groups");
  }
  // Each group's first output row (a million partitions unfold into
  // millions of rows: every array below is faulted in and filled on every worker).
  const int threads = worker_threads(context);
  std::vector<uint32_t> first;
  cpu::resize_prefaulted(first, count + 1);
  const auto rows_of = [&](size_t g) {
    return static_cast<uint32_t>(std::min(groups.k, groups.values_only ? values[g] : all[g]));
  };
  {
    // Offsets in two passes over contiguous parts: each part's row count,
    // then each part's offsets from the counts of the parts before it.
    const int parts = std::max(1, std::min<int>(threads, static_cast<int>(count / 4096) + 1));
    std::vector<uint64_t> part_rows(static_cast<size_t>(parts) + 1, 0);
    cpu::parallel_for(parts, count, [&](int part, size_t begin, size_t end) {
      uint64_t n = 0;
      for (size_t g = begin; g < end; ++g) n += rows_of(g);
      part_rows[static_cast<size_t>(part) + 1] = n;
    });
    for (int part = 0; part < parts; ++part) part_rows[static_cast<size_t>(part) + 1] += part_rows[static_cast<size_t>(part)];
    cpu::parallel_for(parts, count, [&](int part, size_t begin, size_t end) {
      auto at = static_cast<uint32_t>(part_rows[static_cast<size_t>(part)]);
      for (size_t g = begin; g < end; ++g) {
        first[g] = at;
        at += rows_of(g);
      }
      if (end == count) first[count] = at;
    });
  }
  const size_t rows = first[count];
  std::vector<int64_t> ranks;
  cpu::resize_prefaulted(ranks, rows);
  // Group g's row r (its rows in the window's order: its NULLs first or
  // last) is rank j's value, or NULL (-1).
  const auto rank_of = [&](size_t g, int64_t r) -> int64_t {
    const int64_t nulls = groups.values_only ? 0 : all[g] - values[g];
    const bool null = groups.nulls_first ? r < nulls : r >= values[g];
    return null ? -1 : groups.nulls_first ? r - nulls : r;
  };
  const auto rank_column = [&](int64_t j) -> const Vector& {
    return result.columns[groups.keys + 2 + static_cast<size_t>(j)];
  };
  DataChunk out;
  out.rows = rows;
  if (std::all_of(groups.child_source.begin(), groups.child_source.end(), [&](int source) {
        return source >= 0 ? is_plain_array(result.columns[static_cast<size_t>(source)])
                           : std::all_of(result.columns.begin() + static_cast<std::ptrdiff_t>(groups.keys) + 2, result.columns.end(),
                                         [&](const Vector& v) { return is_plain_array(v) && v.dictionary == rank_column(0).dictionary; });
      })) {
    // Every column in one plain array: written in place, row by row.
    std::vector<PlainColumnWriter> writers;
    for (const int source : groups.child_source)
      writers.emplace_back(source >= 0 ? result.columns[static_cast<size_t>(source)] : rank_column(0), rows);
    // A group's rows a column at a time: its keys one run, its ranks' values
    // from the rank columns (in the window's order, its NULLs first or last).
    cpu::parallel_for(threads, count, [&](int, size_t begin, size_t end) {
      for (size_t g = begin; g < end; ++g) {
        const uint32_t at = first[g], n = first[g + 1] - at;
        for (uint32_t r = 0; r < n; ++r) ranks[at + r] = r + 1;
        for (size_t c = 0; c < writers.size(); ++c) {
          const int source = groups.child_source[c];
          if (source >= 0) {
            writers[c].fill(at, n, result.columns[static_cast<size_t>(source)], g);
            continue;
          }
          for (uint32_t r = 0; r < n; ++r) {
            const int64_t j = rank_of(g, r);
            if (j < 0) writers[c].set_null(at + r);
            else writers[c].copy(at + r, rank_column(j), g);
          }
        }
      }
    });
    for (PlainColumnWriter& w : writers) out.columns.push_back(w.finish());
  } else {
    // The ranks' values one column after another: rank j of group g at j * count + g.
    Vector order = std::move(result.columns[groups.keys + 2]);
    for (int64_t j = 1; j < groups.k; ++j) append_vector(order, rank_column(j));
    std::vector<uint32_t> group_rows, order_rows;
    cpu::resize_prefaulted(group_rows, rows);
    cpu::resize_prefaulted(order_rows, rows);
    cpu::parallel_for(threads, count, [&](int, size_t begin, size_t end) {
      for (size_t g = begin; g < end; ++g) {
        for (uint32_t at = first[g]; at < first[g + 1]; ++at) {
          const int64_t j = rank_of(g, at - first[g]);
          ranks[at] = at - first[g] + 1;
          group_rows[at] = static_cast<uint32_t>(g);
          order_rows[at] = j < 0 ? kNullRow : static_cast<uint32_t>(static_cast<uint64_t>(j) * count + g);
        }
      }
    });
    for (const int source : groups.child_source) {
      out.columns.push_back(source >= 0 ? gather(result.columns[static_cast<size_t>(source)], group_rows, threads)
                                        : gather(order, order_rows, threads));
    }
  }
  for (size_t c = 0; c < calls; ++c) {
    Vector rank(SqlType{TypeId::int8});
    if (c + 1 < calls) rank.ints = ranks;
    else rank.ints = std::move(ranks);
    rank.resize(rows);
    out.columns.push_back(std::move(rank));
  }
  if (explain != nullptr) {
    char line[160];
    std::snprintf(line, sizeof line, "Top-N by groups: %zu partitions unfolded into %zu rows in %.3f ms", count, rows,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - unfold_start).count());
    explain->push_back(line);
  }
  return out;
}

}  // namespace tally::executor
