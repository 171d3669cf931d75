#pragma once
// EXPLAIN's plan as a tree, and its four renderings: PostgreSQL's text lines
// ("->" under a parent, "(cost=...)" on each node) and its JSON, YAML and XML
// documents with PostgreSQL's key names ("Node Type", "Startup Cost", "Total
// Cost", "Plan Rows", "Plan Width", "Plans", ...), which clients parse.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/explain_costs.hpp"

namespace tally::executor {

// EXPLAIN ANALYZE's figures of a node, per run (loops: its runs):
// milliseconds to its first and its last row, the process's CPU time
// meanwhile (all threads), rows pushed.
struct ExplainActual {
  double first_ms = 0, total_ms = 0, cpu_ms = 0, rows = 0;
  uint64_t loops = 0;
};

struct ExplainNode {
  std::string label;      // the text line ("Seq Scan on t x")
  std::string node_type;  // PostgreSQL's "Node Type" ("Seq Scan")
  // Structured formats only, after the node type: "Relation Name", "Alias",
  // "Strategy", "Join Type" ... (the text label says them).
  std::vector<std::pair<std::string, std::string>> properties;
  PlanCost cost;
  // "Key: value" lines under the node in text; keys and values in the others.
  std::vector<std::string> details;
  std::vector<ExplainNode> children;  // "Outer" then "Inner" (or each "Member")
  bool members = false;               // children are an Append's or SetOp's members
  // Plans a node runs inside it (a subquery's): its "Subquery" children.
  std::vector<ExplainNode> subplans;
  // EXPLAIN ANALYZE: whether the run was measured (analyzed), and the
  // node's figures (none: "never executed", or a node the operators do not
  // measure, such as an aggregation the plan runs itself).
  bool analyzed = false;
  std::optional<ExplainActual> actual;
};

enum class ExplainFormat { text, json, yaml, xml };

struct ExplainOptions {
  bool analyze = false;
  bool costs = true;
  ExplainFormat format = ExplainFormat::text;
};

// "CPU: <cpu_ms> ms on all threads (<cores> cores)": EXPLAIN ANALYZE's line
// of how many cores a node or the statement kept busy over `wall_ms`.
std::string cpu_time_line(double cpu_ms, double wall_ms);

// The run report's last line starts so: the statement's time, which the
// document formats read back.
inline constexpr char kExecutionTime[] = "Execution Time: ";

// The text format's lines.
std::vector<std::string> explain_text(const ExplainNode& root, bool costs);
// A whole JSON, YAML or XML document. `analyze_lines` are EXPLAIN ANALYZE's
// run report ("Execution Time: 1.234 ms" and the engine's lines).
std::string explain_document(const ExplainNode& root, const ExplainOptions& options,
                             const std::vector<std::string>& analyze_lines);

}  // namespace tally::executor
