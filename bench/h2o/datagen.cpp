// Writes the db-benchmark groupby table as CSV (with a header) to stdout, so it
// streams into COPY, DuckDB's read_csv or a file:
//   h2o_datagen [--rows N] [--k K] [--na PERCENT] [--sort 0|1] [--seed S]
//   h2o_datagen --rows 1e7 | psql -c "COPY x FROM STDIN (FORMAT csv, HEADER true)"
// N and K accept db-benchmark's notation (1e7, 1e2).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench/h2o/groupby_data.hpp"
#include "bench/h2o/options.hpp"

int main(int argc, char** argv) {
  using namespace tally::bench::h2o;
  GroupbyParams p;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc || !parse_data_option(a, argv[i + 1], p)) {
      std::fprintf(stderr, "usage: h2o_datagen [--rows N] [--k K] [--na PERCENT] [--sort 0|1] [--seed S]\n");
      return 2;
    }
    ++i;
  }
  GroupbyGenerator gen(p);
  std::string block;
  bool more = true;
  while (more) {
    block.clear();
    more = gen.next_block(block, 1 << 20);
    size_t done = 0;
    while (done < block.size()) {
      const ssize_t n = ::write(STDOUT_FILENO, block.data() + done, block.size() - done);
      if (n <= 0) return 1;  // the reader went away
      done += static_cast<size_t>(n);
    }
  }
  return 0;
}
