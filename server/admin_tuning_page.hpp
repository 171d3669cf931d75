#pragma once
// The admin endpoint's tuning page: one self-contained HTML document (inline
// CSS and JS, nothing fetched from elsewhere) that shows the tuning cache and,
// per operator signature x variant x cardinality bucket, the measured launch
// configuration grid (threads per block x blocks per SM) as a heat map with the
// tuner's search path drawn through it, like Figure 5 of Rosenfeld et al.,
// DaMoN'19. The data is embedded in the page, so it renders without a request;
// "Refresh" re-reads /tuning.
//
// The tuning JSON the page reads (what AdminCallbacks::tuning_json returns):
// {
//   "device": {"name": "<device name>", ...any scalar fields},   optional
//   "entries": [{
//     "signature": "int4 key; sum(int8), count(*)",
//     "variant": "shared_memory",
//     "cardinality_bucket": 12,                 // log2 of the estimated groups
//     "best": {"threads_per_block": 256, "blocks_per_sm": 4} | "tpb=256,bps=4,...",
//     "seconds_per_row": 4.1e-10,               // the best's measured time
//     "observations": 37,
//     "grid": [{"threads_per_block": 32, "blocks_per_sm": 1, "seconds_per_row": 2e-9}
//              | {"config": "tpb=32,bps=1", "seconds_per_row": 2e-9}, ...],
//     "path": [{"threads_per_block": 128, "blocks_per_sm": 2} | "tpb=128,bps=2", ...]
//   }, ...]
// }
// Times may also be given as "ns_per_row". Unknown fields are ignored. The
// tuning cache's own JSON (catalog::to_json: a bare array of entries with
// operator_signature, best_config, measured_grid, search_path[].event, device)
// is read as well. Cells sharing threads x blocks (other fill factors) show
// the fastest.
#include <string>
#include <string_view>

namespace tally::server {

// The page with `tuning_json` embedded (safely: "<" is escaped).
std::string tuning_page_html(std::string_view tuning_json);

// What /tuning answers when no tuning cache is wired in.
std::string empty_tuning_json();

}  // namespace tally::server
