#include "server/buffered_log_sink.hpp"

#include <unistd.h>

#include <cerrno>

#include "common/log.hpp"
#include "common/thread_name.hpp"

namespace tally::server {

BufferedLogSink::BufferedLogSink(int fd, std::chrono::milliseconds flush_interval, size_t flush_bytes)
    : fd_(fd), flush_interval_(flush_interval), flush_bytes_(flush_bytes) {
  buffer_.reserve(flush_bytes_);
}

BufferedLogSink::~BufferedLogSink() {
  stop();
  if (installed_) log::set_sink(nullptr);  // stopped: lines in flight are written at once
}

void BufferedLogSink::install() {
  {
    std::lock_guard lock(mutex_);
    if (installed_) return;
    installed_ = true;
  }
  thread_ = std::thread([this] {
    name_this_thread("tally-log");
    loop();
  });
  log::set_sink([this](std::string_view line) { append(line); });
}

void BufferedLogSink::append(std::string_view line) {
  std::unique_lock lock(mutex_);
  buffer_.append(line);
  if (stop_) {
    // No writer thread any more: write now, behind what was buffered.
    std::string pending;
    pending.swap(buffer_);
    std::lock_guard write_lock(write_mutex_);
    lock.unlock();
    write_out(pending);
    return;
  }
  const bool wake = buffer_.size() >= flush_bytes_;
  lock.unlock();
  if (wake) full_.notify_one();
}

void BufferedLogSink::loop() {
  std::string pending;
  pending.reserve(flush_bytes_);
  std::unique_lock lock(mutex_);
  while (!stop_) {
    full_.wait_for(lock, flush_interval_, [this] { return stop_ || buffer_.size() >= flush_bytes_; });
    if (buffer_.empty()) continue;
    pending.swap(buffer_);
    // The writer holds write_mutex_ before releasing mutex_, so a flush() that
    // swaps the next buffer cannot overtake it in the file.
    std::lock_guard write_lock(write_mutex_);
    lock.unlock();
    write_out(pending);
    pending.clear();
    lock.lock();
  }
}

void BufferedLogSink::flush() {
  std::string pending;
  std::unique_lock lock(mutex_);
  if (buffer_.empty()) return;
  pending.swap(buffer_);
  std::lock_guard write_lock(write_mutex_);
  lock.unlock();
  write_out(pending);
}

void BufferedLogSink::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  full_.notify_one();
  if (thread_.joinable()) thread_.join();
  flush();
}

void BufferedLogSink::write_out(const std::string& bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere to report a failing log; the lines are dropped
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace tally::server
