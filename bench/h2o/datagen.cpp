// Writes the db-benchmark groupby table as CSV (with a header) to stdout, so it
// streams into COPY, DuckDB's read_csv or a file:
//   h2o_datagen [--rows N] [--k K] [--na PERCENT] [--sort 0|1] [--seed S] [--threads T]
//   h2o_datagen --rows 1e7 | psql -c "COPY x FROM STDIN (FORMAT csv, HEADER true)"
// N and K accept db-benchmark's notation (1e7, 1e2). --threads formats rows on
// T threads (the same bytes: groupby_stream.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/h2o/groupby_data.hpp"
#include "bench/h2o/groupby_stream.hpp"
#include "bench/h2o/options.hpp"

int main(int argc, char** argv) {
  using namespace tally::bench::h2o;
  GroupbyParams p;
  unsigned threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 < argc && a == "--threads") {
      threads = static_cast<unsigned>(std::max(1, std::stoi(argv[++i])));
      continue;
    }
    if (i + 1 >= argc || !parse_data_option(a, argv[i + 1], p)) {
      std::fprintf(stderr, "usage: h2o_datagen [--rows N] [--k K] [--na PERCENT] [--sort 0|1] [--seed S] [--threads T]\n");
      return 2;
    }
    ++i;
  }
  GroupbyCsvStream stream(p, threads);
  for (std::string block; stream.next(block);) {
    size_t done = 0;
    while (done < block.size()) {
      const ssize_t n = ::write(STDOUT_FILENO, block.data() + done, block.size() - done);
      if (n <= 0) return 1;  // the reader went away
      done += static_cast<size_t>(n);
    }
  }
  return 0;
}
