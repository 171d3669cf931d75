#include "storage/dictionary_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/error.hpp"
#include "storage/crc32c.hpp"
#include "storage/file_io.hpp"

namespace tally::storage {
namespace {

[[noreturn]] void corrupted(const std::string& what, const std::string& path, std::string_view why) {
  throw Error(SqlState::data_corrupted,
              "could not read " + what + ": " + std::string(why) + " in file \"" + path + "\"");
}

constexpr std::string_view private_copy_prefix = "tmp.";

}  // namespace

bool is_private_copy(const std::string& file_name) { return file_name.rfind(private_copy_prefix, 0) == 0; }

void keep_private(const std::string& path, uint64_t keep_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_nlink <= 1) return;
  const std::filesystem::path name(path);
  const std::string copy = (name.parent_path() / (std::string(private_copy_prefix) + name.filename().string())).string();
  {
    File in = File::read_only(path);
    File out = File::create(copy);
    std::vector<char> buf(std::min<uint64_t>(keep_bytes, uint64_t{1} << 22));
    for (uint64_t left = keep_bytes; left > 0;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
      if (!in.read_exact(buf.data(), n)) corrupted("dictionary", path, "file is truncated");
      out.write(buf.data(), n);
      left -= n;
    }
    out.sync();
  }
  rename_file(copy, path);
  sync_directory(name.parent_path().string());
}

bool link_dictionary(const std::string& from, const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);  // an uncommitted leftover: the table's committed state is empty
  return ::link(from.c_str(), path.c_str()) == 0;
}

StringDictionary load_dictionary(const std::string& path, const catalog::DictionaryState& state,
                                 const std::string& what, const CancelToken* cancel) {
  StringDictionary dict;
  if (state.entries == 0 && state.bytes == 0) return dict;
  // The file's bytes become the entries' bytes as they are (each entry a
  // view past its length): read once, not copied again.
  // A column of millions of distinct texts takes seconds to read and index:
  // every step checks `cancel` a piece at a time, so that a cancel or
  // statement_timeout stops it (the next reader loads it again).
  const auto tick = [cancel] {
    if (cancel) cancel->check();
  };
  auto buf = std::make_unique_for_overwrite<char[]>(state.bytes);
  uint32_t crc = 0;
  {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) corrupted(what, path, "file is missing");
    File f = File::read_only(path);
    if (f.size() < state.bytes) corrupted(what, path, "file is truncated");
    constexpr size_t piece = size_t{16} << 20;
    for (size_t at = 0; at < state.bytes; at += piece) {
      tick();
      const size_t n = std::min(piece, state.bytes - at);
      if (!f.read_exact(buf.get() + at, n)) corrupted(what, path, "file is truncated");
      crc = crc32c(crc, buf.get() + at, n);
    }
  }
  if (crc != state.crc) corrupted(what, path, "checksum mismatch");
  std::vector<std::string_view> entries;
  entries.reserve(state.entries);
  size_t at = 0;
  for (uint64_t e = 0; e < state.entries; ++e) {
    if ((e & 0xFFFF) == 0) tick();
    uint32_t len;
    if (at + 4 > state.bytes) corrupted(what, path, "entry count mismatch");
    std::memcpy(&len, buf.get() + at, 4);
    at += 4;
    if (len > state.bytes - at) corrupted(what, path, "entry count mismatch");
    entries.emplace_back(buf.get() + at, len);
    at += len;
  }
  if (at != state.bytes) corrupted(what, path, "entry count mismatch");
  if (!StringDictionary::adopt(std::move(buf), entries, tick, dict)) corrupted(what, path, "duplicate entry");
  return dict;
}

catalog::DictionaryState append_dictionary(const std::string& path, const catalog::DictionaryState& committed,
                                           const StringDictionary& dict, bool sync) {
  catalog::DictionaryState next = committed;
  if (static_cast<uint64_t>(dict.size()) == committed.entries) return next;
  // Sized first, then filled: a CREATE TABLE AS of a million text keys adds
  // a million entries at once, and appending them one by one regrew the buffer.
  const auto first = static_cast<int32_t>(committed.entries);
  size_t bytes = 0;
  for (int32_t code = first; code < dict.size(); ++code) bytes += 4 + dict.at(code).size();
  std::string buf(bytes, '\0');
  char* out = buf.data();
  for (int32_t code = first; code < dict.size(); ++code) {
    const std::string_view v = dict.at(code);
    const auto len = static_cast<uint32_t>(v.size());
    std::memcpy(out, &len, 4);
    if (len > 0) std::memcpy(out + 4, v.data(), len);
    out += 4 + len;
  }
  {
    keep_private(path, committed.bytes);
    File f = File::append(path);
    if (f.size() != committed.bytes) f.truncate(committed.bytes);
    f.write(buf.data(), buf.size());
    if (sync) f.sync();
  }
  next.entries = static_cast<uint64_t>(dict.size());
  next.bytes = committed.bytes + buf.size();
  next.crc = crc32c(committed.crc, buf.data(), buf.size());
  return next;
}

}  // namespace tally::storage
