#include "storage/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/error.hpp"
#include "storage/io_threads.hpp"

namespace tally::storage {
namespace {

[[noreturn]] void io_fail(std::string_view what, const std::string& path) {
  const int err = errno;
  throw Error(err == ENOSPC ? SqlState::disk_full : SqlState::io_error,
              "could not " + std::string(what) + " file \"" + path + "\": " + std::strerror(err));
}

int open_or_throw(const std::string& path, int flags, std::string_view what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) io_fail(what, path);
  return fd;
}

}  // namespace

File File::create(const std::string& path) { return File(open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC, "create"), path); }
File File::append(const std::string& path) { return File(open_or_throw(path, O_WRONLY | O_CREAT | O_APPEND, "open"), path); }
File File::read_only(const std::string& path) { return File(open_or_throw(path, O_RDONLY, "open"), path); }

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

void File::write(const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("write", path_);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

bool File::read_exact(void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("read", path_);
    }
    if (n == 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

size_t File::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) io_fail("stat", path_);
  return static_cast<size_t>(st.st_size);
}

void File::truncate(size_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) io_fail("truncate", path_);
}

void File::sync() {
  if (::fsync(fd_) != 0) io_fail("fsync", path_);
}

void File::start_writeback() {
  // Advice only: where the call is not supported the later sync does it all.
  (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_fail("open", path);
  const int rc = ::fdatasync(fd);
  ::close(fd);
  if (rc != 0) io_fail("fsync", path);
}

void rename_file(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) io_fail("rename", from);
}

void sync_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) io_fail("open directory", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) io_fail("fsync directory", path);
}

std::unique_ptr<IoTasks> start_sync_all(const std::vector<std::string>& files,
                                        const std::vector<std::string>& directories) {
  return std::make_unique<IoTasks>(files.size() + directories.size(), [&files, &directories](size_t i) {
    if (i < files.size()) sync_file(files[i]);
    else sync_directory(directories[i - files.size()]);
  });
}

void sync_all(const std::vector<std::string>& files, const std::vector<std::string>& directories) {
  start_sync_all(files, directories)->wait();
}

}  // namespace tally::storage
