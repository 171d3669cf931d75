#pragma once
// Small POSIX file helpers with the durability steps the append protocol needs
// (write fully, fsync the file, fsync its directory). Failures throw
// Error(58030 io_error) naming the path.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "storage/io_threads.hpp"

namespace tally::storage {

class File {
 public:
  // Opens path for writing, creating or truncating it.
  static File create(const std::string& path);
  // Opens path for appending (created when missing).
  static File append(const std::string& path);
  static File read_only(const std::string& path);
  File(File&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }
  File& operator=(File&&) = delete;
  ~File();

  void write(const void* data, size_t size);
  // Reads exactly size bytes; returns false at a short read (truncated file).
  bool read_exact(void* data, size_t size);
  size_t size() const;
  void truncate(size_t size);
  void sync();
  // Starts writing the file's dirty pages to the device without waiting
  // (Linux sync_file_range), so that a later sync waits less: a chunk's
  // files are written, then summarized (statistics), then synced.
  void start_writeback();
  const std::string& path() const { return path_; }

 private:
  File(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// fsyncs (fdatasync) an existing file's contents.
void sync_file(const std::string& path);

// Renames a file over another (rename(2)); durable once its directory is synced.
void rename_file(const std::string& from, const std::string& to);

// fsyncs a directory so that file creations and removals in it are durable.
void sync_directory(const std::string& path);

// Makes every file (sync_file) and directory (sync_directory) durable, the
// syncs running at once on several threads: a filesystem with a journal
// commits concurrent syncs together, where one after the other each waits
// for a journal commit of its own. Throws the first failure, after all ended.
void sync_all(const std::vector<std::string>& files, const std::vector<std::string>& directories);

// The syncs of sync_all, started on threads kept for them while the caller
// goes on (storage/io_threads.hpp); its wait() ends them and throws the first
// failure. The vectors must outlive it.
std::unique_ptr<IoTasks> start_sync_all(const std::vector<std::string>& files,
                                        const std::vector<std::string>& directories);

}  // namespace tally::storage
