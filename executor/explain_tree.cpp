#include "executor/explain_tree.hpp"

#include <cmath>
#include <cstdio>

#include "common/json_string.hpp"

namespace tally::executor {
namespace {

// PostgreSQL's " (actual time=first..total rows=N loops=L)" of an analyzed node.
std::string actual_text(const ExplainNode& node) {
  if (!node.analyzed) return "";
  if (!node.actual) return " (never executed)";
  const ExplainActual& a = *node.actual;
  char buf[160];
  std::snprintf(buf, sizeof buf, " (actual time=%.3f..%.3f rows=%.0f loops=%llu)", a.first_ms, a.total_ms, a.rows,
                static_cast<unsigned long long>(a.loops));
  return buf;
}

void text_lines(const ExplainNode& node, bool costs, int depth, std::vector<std::string>& lines) {
  const std::string pad = depth == 0 ? "" : std::string(static_cast<size_t>(depth - 1) * 6 + 2, ' ') + "->  ";
  lines.push_back(pad + node.label + (costs ? format_cost(node.cost) : "") + actual_text(node));
  const std::string detail_pad(static_cast<size_t>(depth) * 6 + 2, ' ');
  for (const auto& d : node.details) lines.push_back(detail_pad + d);
  // Tally's own line, text format only: how many cores the node kept busy.
  if (node.actual && node.actual->total_ms > 0) {
    lines.push_back(detail_pad + cpu_time_line(node.actual->cpu_ms, node.actual->total_ms));
  }
  for (const auto& child : node.children) text_lines(child, costs, depth + 1, lines);
  for (const auto& sub : node.subplans) text_lines(sub, costs, depth + 1, lines);
}

// One member of a structured document: a scalar, a list of strings, an
// object, or a list of objects (PostgreSQL's ExplainProperty* and groups).
struct Item {
  enum class Kind { string, number, boolean, strings, object, objects } kind = Kind::string;
  std::string key;
  std::string text;               // scalars
  std::vector<std::string> list;  // strings
  std::vector<Item> members;      // object: its members; objects: one object Item each
  std::string element = "Item";   // XML: the element of each list entry
};

Item scalar(std::string key, std::string text, Item::Kind kind = Item::Kind::string) {
  Item i;
  i.kind = kind;
  i.key = std::move(key);
  i.text = std::move(text);
  return i;
}

std::string number(double value, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

Item plan_object(const ExplainNode& node, const char* relationship, bool costs) {
  Item plan;
  plan.kind = Item::Kind::object;
  plan.key = "Plan";
  auto& m = plan.members;
  m.push_back(scalar("Node Type", node.node_type));
  if (relationship) m.push_back(scalar("Parent Relationship", relationship));
  m.push_back(scalar("Parallel Aware", "false", Item::Kind::boolean));
  m.push_back(scalar("Async Capable", "false", Item::Kind::boolean));
  for (const auto& [key, value] : node.properties) m.push_back(scalar(key, value));
  if (costs) {
    m.push_back(scalar("Startup Cost", number(node.cost.startup, "%.2f"), Item::Kind::number));
    m.push_back(scalar("Total Cost", number(node.cost.total, "%.2f"), Item::Kind::number));
    m.push_back(scalar("Plan Rows", number(std::max(1.0, std::round(node.cost.rows)), "%.0f"), Item::Kind::number));
    m.push_back(scalar("Plan Width", std::to_string(node.cost.width), Item::Kind::number));
  }
  if (node.actual) {
    m.push_back(scalar("Actual Startup Time", number(node.actual->first_ms, "%.3f"), Item::Kind::number));
    m.push_back(scalar("Actual Total Time", number(node.actual->total_ms, "%.3f"), Item::Kind::number));
    m.push_back(scalar("Actual Rows", number(node.actual->rows, "%.0f"), Item::Kind::number));
    m.push_back(scalar("Actual Loops", std::to_string(node.actual->loops), Item::Kind::number));
  }
  for (const auto& line : node.details) {
    const size_t colon = line.find(": ");
    std::string key = colon == std::string::npos ? "Detail" : line.substr(0, colon);
    std::string value = colon == std::string::npos ? line : line.substr(colon + 2);
    // Keys are unique within an object.
    int n = 1;
    const std::string base = key;
    for (bool again = true; again;) {
      again = false;
      for (const auto& existing : m) {
        if (existing.key == key) {
          key = base + " " + std::to_string(++n);
          again = true;
        }
      }
    }
    m.push_back(scalar(std::move(key), std::move(value)));
  }
  if (!node.children.empty() || !node.subplans.empty()) {
    Item plans;
    plans.kind = Item::Kind::objects;
    plans.key = "Plans";
    plans.element = "Plan";
    for (size_t i = 0; i < node.children.size(); ++i) {
      plans.members.push_back(
          plan_object(node.children[i], node.members ? "Member" : i == 0 ? "Outer" : "Inner", costs));
    }
    for (const auto& sub : node.subplans) plans.members.push_back(plan_object(sub, "Subquery", costs));
    m.push_back(std::move(plans));
  }
  return plan;
}

std::string json_string(const std::string& s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string scalar_text(const Item& item) {
  return item.kind == Item::Kind::string ? json_string(item.text) : item.text;
}

std::string spaces(size_t n) { return std::string(n, ' '); }

// PostgreSQL's JSON layout: one member a line, objects' braces on their own.
std::string json_object(const std::vector<Item>& members, size_t indent);

std::string json_value(const Item& item, size_t indent) {
  switch (item.kind) {
    case Item::Kind::object: return json_object(item.members, indent);
    case Item::Kind::objects: {
      std::string out = "[";
      for (size_t i = 0; i < item.members.size(); ++i) {
        out += (i ? ",\n" : "\n") + spaces(indent + 2) + json_object(item.members[i].members, indent + 2);
      }
      return out + "\n" + spaces(indent) + "]";
    }
    case Item::Kind::strings: {
      if (item.list.empty()) return "[\n" + spaces(indent) + "]";
      std::string out = "[";
      for (size_t i = 0; i < item.list.size(); ++i) out += (i ? ", " : "") + json_string(item.list[i]);
      return out + "]";
    }
    default: return scalar_text(item);
  }
}

std::string json_object(const std::vector<Item>& members, size_t indent) {
  std::string out = "{";
  for (size_t i = 0; i < members.size(); ++i) {
    out += (i ? ",\n" : "\n") + spaces(indent + 2) + json_string(members[i].key) + ": " +
           json_value(members[i], indent + 2);
  }
  return out + "\n" + spaces(indent) + "}";
}

// PostgreSQL's YAML: "Key: value", nested members two spaces in, list
// entries as "- " with their first member on the same line.
std::string yaml_members(const std::vector<Item>& members, size_t indent, bool first_inline);

std::string yaml_member(const Item& item, size_t indent) {
  std::string out = item.key + ": ";
  switch (item.kind) {
    case Item::Kind::object: return out + "\n" + spaces(indent + 2) + yaml_members(item.members, indent + 2, true);
    case Item::Kind::objects:
      for (const auto& o : item.members) out += "\n" + spaces(indent + 2) + "- " + yaml_members(o.members, indent + 4, true);
      return out;
    case Item::Kind::strings:
      for (const auto& s : item.list) out += "\n" + spaces(indent + 2) + "- " + json_string(s);
      return out;
    default: return out + scalar_text(item);
  }
}

std::string yaml_members(const std::vector<Item>& members, size_t indent, bool first_inline) {
  std::string out;
  for (size_t i = 0; i < members.size(); ++i) {
    if (i > 0 || !first_inline) out += "\n" + spaces(indent);
    out += yaml_member(members[i], indent);
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// PostgreSQL's XML: keys become elements, spaces in them hyphens.
std::string xml_tag(const std::string& key) {
  std::string tag = key;
  for (char& c : tag) {
    if (c == ' ') c = '-';
  }
  return tag;
}

std::string xml_members(const std::vector<Item>& members, size_t indent) {
  std::string out;
  for (const auto& item : members) {
    const std::string tag = xml_tag(item.key);
    out += spaces(indent) + "<" + tag + ">";
    switch (item.kind) {
      case Item::Kind::object: out += "\n" + xml_members(item.members, indent + 2) + spaces(indent); break;
      case Item::Kind::objects:
        out += "\n";
        for (const auto& o : item.members) {
          out += spaces(indent + 2) + "<" + item.element + ">\n" + xml_members(o.members, indent + 4) +
                 spaces(indent + 2) + "</" + item.element + ">\n";
        }
        out += spaces(indent);
        break;
      case Item::Kind::strings:
        out += "\n";
        for (const auto& s : item.list) out += spaces(indent + 2) + "<Item>" + xml_escape(s) + "</Item>\n";
        out += spaces(indent);
        break;
      default: out += xml_escape(item.text);
    }
    out += "</" + tag + ">\n";
  }
  return out;
}

}  // namespace

std::vector<std::string> explain_text(const ExplainNode& root, bool costs) {
  std::vector<std::string> lines;
  text_lines(root, costs, 0, lines);
  return lines;
}

std::string explain_document(const ExplainNode& root, const ExplainOptions& options,
                             const std::vector<std::string>& analyze_lines) {
  std::vector<Item> query{plan_object(root, nullptr, options.costs)};
  if (options.analyze) {
    // PostgreSQL's summary keys; Tally's engine report (which engine and
    // variant ran, actual groups, rows scanned) as a list beside them.
    Item report;
    report.kind = Item::Kind::strings;
    report.key = "Tally Engine Report";
    std::string planning_time, execution_time;
    for (const auto& line : analyze_lines) {
      static const std::string planning = "Planning Time: ", execution = kExecutionTime;
      if (line.rfind(planning, 0) == 0) {
        planning_time = line.substr(planning.size(), line.find(' ', planning.size()) - planning.size());
      } else if (line.rfind(execution, 0) == 0) {
        execution_time = line.substr(execution.size(), line.find(' ', execution.size()) - execution.size());
      } else {
        report.list.push_back(line);
      }
    }
    if (!planning_time.empty()) query.push_back(scalar("Planning Time", planning_time, Item::Kind::number));
    Item triggers;
    triggers.kind = Item::Kind::strings;
    triggers.key = "Triggers";
    triggers.element = "Trigger";
    query.push_back(std::move(triggers));
    if (!execution_time.empty()) query.push_back(scalar("Execution Time", execution_time, Item::Kind::number));
    query.push_back(std::move(report));
  }
  switch (options.format) {
    case ExplainFormat::json: return "[\n  " + json_object(query, 2) + "\n]";
    case ExplainFormat::yaml: return "- " + yaml_members(query, 2, true);
    case ExplainFormat::xml:
      return "<explain xmlns=\"http://www.postgresql.org/2009/explain\">\n  <Query>\n" + xml_members(query, 4) +
             "  </Query>\n</explain>";
    case ExplainFormat::text: break;
  }
  std::string out;
  for (const auto& line : explain_text(root, options.costs)) out += (out.empty() ? "" : "\n") + line;
  return out;
}

std::string cpu_time_line(double cpu_ms, double wall_ms) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "CPU: %.3f ms on all threads (%.1f cores)", cpu_ms, wall_ms > 0 ? cpu_ms / wall_ms : 0.0);
  return buf;
}

}  // namespace tally::executor
