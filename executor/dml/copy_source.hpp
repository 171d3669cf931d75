#pragma once
// Where COPY FROM reads its bytes: the client's CopyData stream or a server
// file. next() appends the next block to buf and returns false at the end.
#include <cstdio>
#include <string>

#include "common/query_handler.hpp"

namespace tally::executor::dml {

class CopySource {
 public:
  virtual ~CopySource() = default;
  virtual bool next(std::string& buf) = 0;
};

class StdinCopySource final : public CopySource {
 public:
  explicit StdinCopySource(tally::CopyInReader& reader) : reader_(reader) {}
  bool next(std::string& buf) override {
    if (done_) return false;
    auto data = reader_.next();
    if (!data) {
      done_ = true;
      return false;
    }
    buf.append(*data);
    return true;
  }
  // Reads and discards the rest of the stream (after the \. end marker).
  void drain() {
    std::string sink;
    while (next(sink)) sink.clear();
  }

 private:
  tally::CopyInReader& reader_;
  bool done_ = false;
};

class FileCopySource final : public CopySource {
 public:
  // Throws 58P01/58030 when the file cannot be opened.
  explicit FileCopySource(const std::string& path);
  ~FileCopySource() override;
  bool next(std::string& buf) override;

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace tally::executor::dml
