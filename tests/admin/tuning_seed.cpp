// tuning_seed CATALOG_PATH [ENTRIES]: writes tuning-cache entries into the
// SQLite file of a running (or stopped) tallyd, the way the tuner does: each is
// a real DaMoN'19 search (gpu::DamonSearch) driven to convergence over the
// sample surface of tests/admin/sample_tuning.hpp, recorded through
// the engines' tuning store (executor/tuning_store_catalog.hpp). Used by tallyd_admin_test.py to check that /tuning,
// the tuning page and tally_tuning_cache_entries read the persisted cache.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include "catalog/tuning_cache.hpp"
#include "executor/tuning_store_catalog.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "gpu/tuner/damon_search.hpp"
#include "tests/admin/sample_tuning.hpp"

int main(int argc, char** argv) {
  using namespace tally;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: tuning_seed CATALOG_PATH [ENTRIES]\n");
    return 2;
  }
  const int entries = argc == 3 ? std::atoi(argv[2]) : 3;
  try {
    auto cache = catalog::TuningCache::open(argv[1]);
    const gpu::SearchSpace space({{gpu::ConfigDimension::threads_per_block, gpu::SearchSpace::powers_of_two(32, 1024)},
                                  {gpu::ConfigDimension::blocks_per_sm, gpu::SearchSpace::powers_of_two(1, 32)}});
    const char* variants[] = {"shared_memory", "global", "sort"};
    for (int i = 0; i < entries; ++i) {
      // A different optimum per entry, so the page's heat maps differ.
      const int best_tpb = 64 << (i % 4), best_bps = 2 << (i % 3);
      gpu::LaunchConfig start;
      start.threads_per_block = 1024;
      start.blocks_per_sm = 1;
      gpu::DamonSearch search(space, {start});
      for (int chunk = 0; chunk < 10000 && !search.converged(); ++chunk) {
        const gpu::LaunchConfig c = search.next_configuration();
        search.report(c, testing_admin::sample_time(c.threads_per_block, c.blocks_per_sm, best_tpb, best_bps));
      }
      if (!search.converged()) throw std::runtime_error("the sample search did not converge");
      TuningRecord r;
      r.device = "Seeded Test GPU|sm_90|132sm|85029158912B|drv13000";
      r.signature = "keys=int4;width=4;aggs=count,sum(int8)";
      r.variant = variants[i % 3];
      r.bucket = 10 + i;
      r.search_state = gpu::to_json(search.state()).dump();
      r.source = "search";
      executor::TuningStoreCatalog(*cache).store(r);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tuning_seed: %s\n", e.what());
    return 1;
  }
  return 0;
}
