#pragma once
// EXPLAIN's plan as a tree, and its four renderings: PostgreSQL's text lines
// ("->" under a parent, "(cost=...)" on each node) and its JSON, YAML and XML
// documents with PostgreSQL's key names ("Node Type", "Startup Cost", "Total
// Cost", "Plan Rows", "Plan Width", "Plans", ...), which clients parse.
#include <string>
#include <utility>
#include <vector>

#include "executor/explain_costs.hpp"

namespace tally::executor {

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
};

enum class ExplainFormat { text, json, yaml, xml };

struct ExplainOptions {
  bool analyze = false;
  bool costs = true;
  ExplainFormat format = ExplainFormat::text;
};

// The text format's lines.
std::vector<std::string> explain_text(const ExplainNode& root, bool costs);
// A whole JSON, YAML or XML document. `analyze_lines` are EXPLAIN ANALYZE's
// run report ("Execution Time: 1.234 ms" and the engine's lines).
std::string explain_document(const ExplainNode& root, const ExplainOptions& options,
                             const std::vector<std::string>& analyze_lines);

}  // namespace tally::executor
