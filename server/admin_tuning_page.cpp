#include "server/admin_tuning_page.hpp"

namespace tally::server {
namespace {

constexpr std::string_view page_head = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Tally tuning cache</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2430; background: #fafbfc; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  .muted { color: #5b6575; }
  table { border-collapse: collapse; margin: 12px 0 20px; background: #fff; }
  th, td { border: 1px solid #d5dae1; padding: 4px 8px; text-align: left; }
  th { background: #eef1f5; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  #maps { display: flex; flex-wrap: wrap; gap: 20px; }
  figure.heatmap { margin: 0; padding: 10px; background: #fff; border: 1px solid #d5dae1; }
  figcaption { font-weight: 600; margin-bottom: 6px; }
  svg text { font: 11px system-ui, sans-serif; }
  rect.cell { stroke: #fff; stroke-width: 1; }
  rect.empty { fill: #eceff3; }
  rect.best { stroke: #111; stroke-width: 3; fill: none; }
  polyline.tuner-path { fill: none; stroke: #1f3cff; stroke-width: 2.5; stroke-opacity: .85; }
  circle.path-step { fill: #1f3cff; stroke: #fff; stroke-width: 1; }
  circle.path-start { fill: #fff; stroke: #1f3cff; stroke-width: 2.5; }
  button { font: inherit; }
</style>
</head>
<body>
<h1>Tally tuning cache</h1>
<div id="device" class="muted"></div>
<p class="muted">Each map is one operator signature, variant and cardinality bucket: cells are
measured launch configurations (time per row, green = fastest, red = 4&times; slower or more),
the blue line is the tuner's search path (hollow circle = start), the black frame the best
configuration. <button id="refresh" type="button">Refresh</button> <span id="status"></span></p>
<table id="entries"><thead><tr><th>Signature</th><th>Variant</th><th>Groups (bucket)</th>
<th>Best configuration</th><th>ns / row</th><th>Observations</th><th>Measured points</th></tr></thead>
<tbody></tbody></table>
<p id="empty" hidden>The tuning cache is empty: no query has been tuned on this device yet.</p>
<div id="maps"></div>
<script type="application/json" id="tuning-data">)HTML";

constexpr std::string_view page_tail = R"HTML(</script>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const CELL_W = 58, CELL_H = 34, LEFT = 64, TOP = 10, BOTTOM = 44;

function el(name, attrs, text) {
  const node = name.startsWith("svg:") ? document.createElementNS(SVG, name.slice(4))
                                       : document.createElement(name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// A configuration from {threads_per_block, blocks_per_sm} or "tpb=..,bps=..".
function point(p) {
  if (p === null || p === undefined) return null;
  if (typeof p === "string") p = { config: p };
  let tpb = p.threads_per_block, bps = p.blocks_per_sm;
  if ((tpb === undefined || bps === undefined) && typeof p.config === "string") {
    for (const part of p.config.split(",")) {
      const [k, v] = part.split("=").map(s => s.trim());
      if (k === "tpb" || k === "threads_per_block") tpb = Number(v);
      if (k === "bps" || k === "blocks_per_sm") bps = Number(v);
    }
  }
  if (!Number.isFinite(Number(tpb)) || !Number.isFinite(Number(bps))) return null;
  const out = { tpb: Number(tpb), bps: Number(bps) };
  if (p.seconds_per_row !== undefined) out.t = Number(p.seconds_per_row);
  else if (p.ns_per_row !== undefined) out.t = Number(p.ns_per_row) * 1e-9;
  return out;
}

function color(ratio) {
  // Green at the fastest cell to red at 4x slower, on a log scale.
  const x = Math.min(1, Math.max(0, Math.log2(ratio) / 2));
  return "hsl(" + Math.round(120 * (1 - x)) + ",70%," + Math.round(42 + 10 * x) + "%)";
}

function ns(t) { return Number.isFinite(t) ? (t * 1e9).toFixed(t * 1e9 < 10 ? 3 : 1) : ""; }

// Accepts both spellings of an entry: {signature, best, grid, path} and the
// tuning cache's {operator_signature, best_config, measured_grid, search_path}.
function normalize(entry) {
  return {
    signature: entry.signature ?? entry.operator_signature ?? "",
    variant: entry.variant ?? "",
    bucket: entry.cardinality_bucket,
    best: point(entry.best ?? entry.best_config),
    t: Number(entry.seconds_per_row ?? (entry.ns_per_row ?? NaN) * 1e-9),
    observations: entry.observations,
    source: entry.source,
    device: typeof entry.device === "string" ? entry.device : undefined,
    grid: entry.grid ?? entry.measured_grid ?? [],
    path: entry.path ?? entry.search_path ?? [],
  };
}

function heatmap(entry, index) {
  // Several measured points can share a cell (other fill factors or rows per
  // thread): the cell shows the fastest.
  const cellBest = new Map();
  for (const p of entry.grid.map(point)) {
    if (!p || !Number.isFinite(p.t)) continue;
    const key = p.tpb + "/" + p.bps;
    if (!cellBest.has(key) || p.t < cellBest.get(key).t) cellBest.set(key, p);
  }
  const grid = [...cellBest.values()];
  const rawPath = entry.path.map(step => ({ step, p: point(step) })).filter(s => s.p);
  const path = rawPath.map(s => s.p);
  const best = entry.best;
  const xs = [...new Set(grid.concat(path).map(p => p.tpb))].sort((a, b) => a - b);
  const ys = [...new Set(grid.concat(path).map(p => p.bps))].sort((a, b) => b - a);
  const fig = el("figure", { class: "heatmap", id: "map-" + index,
                             "data-variant": String(entry.variant),
                             "data-bucket": String(entry.bucket ?? "") });
  fig.appendChild(el("figcaption", {}, (entry.variant || "?") + " \u00b7 ~2^" +
                     (entry.bucket ?? "?") + " groups \u00b7 " + entry.signature));
  if (xs.length === 0) {
    fig.appendChild(el("p", { class: "muted no-grid" }, "No measurements yet."));
    return fig;
  }
  const width = LEFT + xs.length * CELL_W + 10, height = TOP + ys.length * CELL_H + BOTTOM;
  const svg = el("svg:svg", { width, height, viewBox: "0 0 " + width + " " + height,
                              role: "img", "aria-label": "configuration heat map" });
  const tmin = Math.min(...grid.map(p => p.t));
  const cx = p => LEFT + xs.indexOf(p.tpb) * CELL_W + CELL_W / 2;
  const cy = p => TOP + ys.indexOf(p.bps) * CELL_H + CELL_H / 2;
  const measured = cellBest;
  for (const y of ys) {
    for (const x of xs) {
      const m = measured.get(x + "/" + y);
      const attrs = { x: LEFT + xs.indexOf(x) * CELL_W, y: TOP + ys.indexOf(y) * CELL_H,
                      width: CELL_W, height: CELL_H, "data-tpb": x, "data-bps": y };
      if (m) {
        attrs.class = "cell";
        attrs.fill = color(m.t / tmin);
        attrs["data-ns-per-row"] = ns(m.t);
      } else {
        attrs.class = "cell empty";
      }
      const rect = el("svg:rect", attrs);
      rect.appendChild(el("svg:title", {}, x + " threads/block \u00d7 " + y + " blocks/SM" +
                          (m ? ": " + ns(m.t) + " ns/row" : ": not measured")));
      svg.appendChild(rect);
      // The label sits low in the cell so the path through its centre leaves it readable.
      if (m) svg.appendChild(el("svg:text", { x: attrs.x + CELL_W / 2, y: attrs.y + CELL_H - 5,
                                              "text-anchor": "middle", class: "cell-label" }, ns(m.t)));
    }
  }
  xs.forEach((x, i) => svg.appendChild(el("svg:text", { x: LEFT + i * CELL_W + CELL_W / 2,
      y: TOP + ys.length * CELL_H + 16, "text-anchor": "middle", class: "x-tick" }, String(x))));
  ys.forEach((y, i) => svg.appendChild(el("svg:text", { x: LEFT - 8, y: TOP + i * CELL_H + CELL_H / 2 + 4,
      "text-anchor": "end", class: "y-tick" }, String(y))));
  svg.appendChild(el("svg:text", { x: LEFT + xs.length * CELL_W / 2, y: height - 6,
                                   "text-anchor": "middle" }, "threads per block"));
  svg.appendChild(el("svg:text", { x: 12, y: TOP + ys.length * CELL_H / 2, "text-anchor": "middle",
      transform: "rotate(-90 12 " + (TOP + ys.length * CELL_H / 2) + ")" }, "blocks per SM"));
  if (best && xs.includes(best.tpb) && ys.includes(best.bps)) {
    svg.appendChild(el("svg:rect", { class: "best", x: LEFT + xs.indexOf(best.tpb) * CELL_W + 1.5,
        y: TOP + ys.indexOf(best.bps) * CELL_H + 1.5, width: CELL_W - 3, height: CELL_H - 3,
        "data-tpb": best.tpb, "data-bps": best.bps }));
  }
  if (path.length > 0) {
    svg.appendChild(el("svg:polyline", { class: "tuner-path", "data-steps": path.length,
        points: path.map(p => cx(p) + "," + cy(p)).join(" ") }));
    rawPath.forEach(({ step, p }, i) => {
      const event = typeof step === "object" && typeof step.event === "string" ? step.event : "";
      const circle = el("svg:circle", {
          class: (i === 0 ? "path-step path-start" : "path-step") + (event ? " event-" + event : ""),
          cx: cx(p), cy: cy(p), r: i === 0 ? 5 : 3.5, "data-step": i });
      circle.appendChild(el("svg:title", {}, "step " + i + ": " + p.tpb + " \u00d7 " + p.bps +
                            (event ? " (" + event + ")" : "")));
      svg.appendChild(circle);
    });
  }
  fig.appendChild(svg);
  return fig;
}

function render(data) {
  // Either {device, entries: [...]} or the tuning cache's bare array of entries.
  const list = Array.isArray(data) ? data : (Array.isArray(data.entries) ? data.entries : []);
  const entries = list.map(normalize);
  const device = Array.isArray(data) ? null : data.device;
  let facts = [];
  if (device && typeof device === "object")
    facts = Object.entries(device).filter(([, v]) => typeof v !== "object").map(([k, v]) => k + ": " + v);
  else if (typeof device === "string") facts = [device];
  else facts = [...new Set(entries.map(e => e.device).filter(d => d))];
  document.getElementById("device").textContent =
      facts.length ? "Device \u2014 " + facts.join(" \u00b7 ") : "No GPU device reported.";
  const body = document.querySelector("#entries tbody");
  const maps = document.getElementById("maps");
  body.replaceChildren();
  maps.replaceChildren();
  document.getElementById("empty").hidden = entries.length > 0;
  entries.forEach((entry, i) => {
    const row = el("tr", { class: "entry", "data-index": i });
    const cells = [entry.signature, entry.variant,
                   Number.isFinite(entry.bucket) ? "~" + Math.pow(2, entry.bucket).toLocaleString("en-US") + " (" + entry.bucket + ")" : "",
                   entry.best ? entry.best.tpb + " threads/block \u00d7 " + entry.best.bps + " blocks/SM" +
                                (entry.source ? " (" + entry.source + ")" : "") : "",
                   ns(entry.t), String(entry.observations ?? ""), String(entry.grid.length)];
    cells.forEach((text, c) => row.appendChild(el("td", c >= 4 ? { class: "num" } : {}, text)));
    body.appendChild(row);
    maps.appendChild(heatmap(entry, i));
  });
  document.body.setAttribute("data-rendered", String(entries.length));
}

function token() { return new URLSearchParams(location.search).get("token"); }

document.getElementById("refresh").addEventListener("click", async () => {
  const status = document.getElementById("status");
  try {
    const t = token();
    const response = await fetch("/tuning", { headers: t ? { Authorization: "Bearer " + t } : {} });
    if (!response.ok) throw new Error("HTTP " + response.status);
    render(await response.json());
    status.textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    status.textContent = "refresh failed: " + e.message;
  }
});

try {
  render(JSON.parse(document.getElementById("tuning-data").textContent));
} catch (e) {
  document.getElementById("status").textContent = "tuning data unreadable: " + e.message;
}
</script>
</body>
</html>
)HTML";

}  // namespace

std::string tuning_page_html(std::string_view tuning_json) {
  std::string page(page_head);
  page.reserve(page.size() + tuning_json.size() + page_tail.size());
  // In JSON "<" can only occur inside strings, where \u003c means the same;
  // escaping it means the data can never close the script element.
  for (char c : tuning_json) {
    if (c == '<') page += "\\u003c";
    else page += c;
  }
  page += page_tail;
  return page;
}

std::string empty_tuning_json() { return "{\"device\":null,\"entries\":[]}"; }

}  // namespace tally::server
