// server/buffered_log_sink.hpp: lines from many threads reach the file whole
// and in each thread's order, by size, by time and at stop(); after stop()
// lines are written at once.
#include "server/buffered_log_sink.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/log.hpp"

namespace tally::server {
namespace {

using namespace std::chrono_literals;

// An unlinked temporary file and what has been written to it so far.
class TempFile {
 public:
  TempFile() {
    char path[] = "/tmp/buffered_log_sink_test_XXXXXX";
    fd_ = ::mkstemp(path);
    if (fd_ >= 0) ::unlink(path);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }
  std::string contents() const {
    std::string out;
    char buf[65536];
    for (off_t at = 0;;) {
      ssize_t n = ::pread(fd_, buf, sizeof buf, at);
      if (n <= 0) return out;
      out.append(buf, size_t(n));
      at += n;
    }
  }

 private:
  int fd_ = -1;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(BufferedLogSink, LinesFromManyThreadsArriveWholeAndInEachThreadsOrder) {
  TempFile file;
  ASSERT_GE(file.fd(), 0);
  constexpr int threads = 4, per_thread = 5000;
  {
    // A small flush size so that the writer thread flushes while lines pour in.
    BufferedLogSink sink(file.fd(), 1000ms, 4096);
    sink.install();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([t] {
        for (int i = 0; i < per_thread; ++i) log::info("test_line", {{"thread", t}, {"seq", i}});
      });
    }
    for (auto& w : workers) w.join();
    sink.stop();
  }
  std::map<int, int> next;  // thread -> next expected seq
  size_t count = 0;
  for (const std::string& line : lines_of(file.contents())) {
    int thread = -1, seq = -1;
    const auto t = line.find(" thread="), s = line.find(" seq=");
    ASSERT_NE(t, std::string::npos) << line;
    ASSERT_NE(s, std::string::npos) << line;
    ASSERT_NE(line.find(" event=test_line "), std::string::npos) << line;
    thread = std::atoi(line.c_str() + t + 8);
    seq = std::atoi(line.c_str() + s + 5);
    EXPECT_EQ(seq, next[thread]) << "thread " << thread << " out of order: " << line;
    next[thread] = seq + 1;
    ++count;
  }
  EXPECT_EQ(count, size_t(threads) * per_thread);
}

TEST(BufferedLogSink, AQuietLineIsWrittenWithinTheFlushInterval) {
  TempFile file;
  BufferedLogSink sink(file.fd(), 20ms, 1 << 20);
  sink.install();
  log::info("lonely_line");
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (file.contents().empty() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_NE(file.contents().find("event=lonely_line"), std::string::npos);
  sink.stop();
}

TEST(BufferedLogSink, AfterStopLinesAreWrittenAtOnceBehindTheBufferedOnes) {
  TempFile file;
  BufferedLogSink sink(file.fd(), 10s, 1 << 20);
  sink.install();
  log::info("first");
  EXPECT_EQ(file.contents(), "") << "below the size threshold a line waits for the interval (10 s)";
  sink.stop();
  log::info("second");
  const auto lines = lines_of(file.contents());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("event=first"), std::string::npos);
  EXPECT_NE(lines[1].find("event=second"), std::string::npos);
}

}  // namespace
}  // namespace tally::server
