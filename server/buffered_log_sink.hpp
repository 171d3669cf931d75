#pragma once
// A log sink (common/log.hpp's set_sink) that takes the write(2) off the
// threads that log: a line is appended to a buffer, and a background thread
// writes the buffer to a file descriptor (tallyd: stderr) when it reaches
// flush_bytes or after flush_interval, whichever comes first, and at stop().
// Lines stay whole (each buffer ends at a line boundary). PostgreSQL's logging
// collector does the same for its backends.
//
// What it costs a logging thread: one memcpy under this sink's mutex (which
// common/log.cpp's own sink mutex already serializes). What it risks: lines
// of the last flush_interval are lost if the process is killed by a signal it
// cannot catch (SIGKILL, a crash); a clean exit (stop() or the destructor)
// writes everything.
//
//   server::BufferedLogSink sink(STDERR_FILENO);
//   sink.install();   // every log:: line now goes through it
//   ...
//   sink.stop();      // flushes; later lines are written as they come
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tally::server {

class BufferedLogSink {
 public:
  // Bounds the delay before a line reaches the file (tail -f, a container's log).
  static constexpr std::chrono::milliseconds default_flush_interval{50};
  // A full pipe buffer's worth: one write(2) per 64 KiB when lines pour in.
  static constexpr size_t default_flush_bytes = 64 * 1024;

  explicit BufferedLogSink(int fd, std::chrono::milliseconds flush_interval = default_flush_interval,
                           size_t flush_bytes = default_flush_bytes);
  ~BufferedLogSink();
  BufferedLogSink(const BufferedLogSink&) = delete;
  BufferedLogSink& operator=(const BufferedLogSink&) = delete;

  // Makes this the process's log sink (log::set_sink) and starts the writer.
  void install();
  // Appends one finished line (what the installed sink calls).
  void append(std::string_view line);
  // Writes what is buffered now, on the calling thread.
  void flush();
  // Stops the writer thread and flushes; lines appended afterwards are
  // written at once, in order. Idempotent. The destructor also restores the
  // default sink.
  void stop();

 private:
  void loop();
  void write_out(const std::string& bytes);

  const int fd_;
  const std::chrono::milliseconds flush_interval_;
  const size_t flush_bytes_;
  std::mutex mutex_;                 // guards buffer_, stop_ and installed_
  std::condition_variable full_;     // buffer_ reached flush_bytes_, or stop
  std::string buffer_;
  bool stop_ = false;
  bool installed_ = false;
  std::mutex write_mutex_;           // one writer at a time keeps the file's order
  std::thread thread_;
};

}  // namespace tally::server
