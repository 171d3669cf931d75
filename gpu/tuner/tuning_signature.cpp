#include "gpu/tuner/tuning_signature.hpp"

#include <algorithm>

namespace tally::gpu {

namespace {

std::string_view width_name(tally::ColumnWidth w) {
  switch (w) {
    case tally::ColumnWidth::int32: return "int4";
    case tally::ColumnWidth::int64: return "int8";
    case tally::ColumnWidth::float32: return "float4";
    case tally::ColumnWidth::float64: return "float8";
  }
  return "?";
}

std::string_view op_name(tally::PartialOp op) {
  using tally::PartialOp;
  switch (op) {
    case PartialOp::count_rows: return "count_rows";
    case PartialOp::count_valid: return "count_valid";
    case PartialOp::sum_int: return "sum_int";
    case PartialOp::sum_float: return "sum_float";
    case PartialOp::min_int: return "min_int";
    case PartialOp::max_int: return "max_int";
    case PartialOp::min_float: return "min_float";
    case PartialOp::max_float: return "max_float";
    case PartialOp::moments_int: return "moments_int";
    case PartialOp::moments_float: return "moments_float";
    case PartialOp::moments2_float: return "moments2_float";
    case PartialOp::ordered_values: return "ordered_values";
    case PartialOp::count_distinct: return "count_distinct";
  }
  return "?";
}


std::optional<tally::ColumnWidth> parse_width(std::string_view name) {
  for (auto w : {tally::ColumnWidth::int32, tally::ColumnWidth::int64, tally::ColumnWidth::float32,
                 tally::ColumnWidth::float64})
    if (width_name(w) == name) return w;
  return std::nullopt;
}
std::optional<tally::PartialOp> parse_op(std::string_view name) {
  using tally::PartialOp;
  for (auto op : {PartialOp::count_rows, PartialOp::count_valid, PartialOp::sum_int, PartialOp::sum_float, PartialOp::min_int,
                  PartialOp::max_int, PartialOp::min_float, PartialOp::max_float, PartialOp::moments_int,
                  PartialOp::moments_float, PartialOp::moments2_float, PartialOp::ordered_values,
                  PartialOp::count_distinct})
    if (op_name(op) == name) return op;
  return std::nullopt;
}
// Splits on `sep`; an empty text gives no parts.
std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}
std::optional<int> parse_index(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::string tuning_signature(const tally::AggregationSpec& spec) {
  std::vector<std::string> aggs;
  for (const auto& a : spec.aggregates) {
    std::string s(op_name(a.op));
    if (a.input >= 0) s += "(" + std::to_string(a.input) + (a.input2 >= 0 ? "," + std::to_string(a.input2) : "") + ")";
    aggs.push_back(std::move(s));
  }
  std::sort(aggs.begin(), aggs.end());
  std::string out = "key=" + std::string(width_name(spec.key_width)) + ";values=";
  for (size_t i = 0; i < spec.value_widths.size(); ++i) out += (i ? "," : "") + std::string(width_name(spec.value_widths[i]));
  out += ";aggs=";
  for (size_t i = 0; i < aggs.size(); ++i) out += (i ? "," : "") + aggs[i];
  return out;
}

std::optional<SignatureShape> parse_tuning_signature(std::string_view signature) {
  const auto parts = split(signature, ';');
  if (parts.size() != 3 || !parts[0].starts_with("key=") || !parts[1].starts_with("values=") ||
      !parts[2].starts_with("aggs="))
    return std::nullopt;
  SignatureShape out;
  const auto key = parse_width(parts[0].substr(4));
  if (!key) return std::nullopt;
  out.key_width = *key;
  for (std::string_view v : split(parts[1].substr(7), ',')) {
    const auto w = parse_width(v);
    if (!w) return std::nullopt;
    out.value_widths.push_back(*w);
  }
  // Aggregates: name or name(i) or name(i,j); the commas inside parentheses
  // are not separators.
  std::string_view aggs = parts[2].substr(5);
  while (!aggs.empty()) {
    size_t end = 0;
    int depth = 0;
    while (end < aggs.size() && (aggs[end] != ',' || depth > 0)) {
      depth += aggs[end] == '(' ? 1 : aggs[end] == ')' ? -1 : 0;
      ++end;
    }
    std::string_view item = aggs.substr(0, end);
    aggs.remove_prefix(std::min(end + 1, aggs.size()));
    tally::PartialAggregate a;
    const size_t open = item.find('(');
    const auto op = parse_op(item.substr(0, open));
    if (!op) return std::nullopt;
    a.op = *op;
    if (open != std::string_view::npos) {
      if (!item.ends_with(")")) return std::nullopt;
      const auto args = split(item.substr(open + 1, item.size() - open - 2), ',');
      if (args.empty() || args.size() > 2) return std::nullopt;
      const auto first = parse_index(args[0]);
      if (!first || *first >= static_cast<int>(out.value_widths.size())) return std::nullopt;
      a.input = *first;
      if (args.size() == 2) {
        const auto second = parse_index(args[1]);
        if (!second || *second >= static_cast<int>(out.value_widths.size())) return std::nullopt;
        a.input2 = *second;
      }
    }
    out.aggregates.push_back(a);
  }
  if (out.aggregates.empty()) return std::nullopt;
  return out;
}

}  // namespace tally::gpu
