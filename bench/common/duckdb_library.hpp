#pragma once
// DuckDB through its C API, loaded with dlopen from a path given at run time
// (scripts/fetch_duckdb.sh extracts libduckdb.so from the npm package), so
// nothing of DuckDB is linked into the build or committed. Only the calls the
// benchmark makes are declared; their signatures and the result struct are
// duckdb.h's (stable C API since 1.0; duckdb_fetch_chunk since 1.1).
#include <dlfcn.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tally::bench {

namespace duck {
using idx_t = uint64_t;
using database = void*;
using connection = void*;
using data_chunk = void*;
using vector = void*;
using logical_type = void*;
enum state : int { kSuccess = 0, kError = 1 };
// duckdb_result: the deprecated fields keep its size and layout.
struct result {
  idx_t deprecated_column_count;
  idx_t deprecated_row_count;
  idx_t deprecated_rows_changed;
  void* deprecated_columns;
  char* deprecated_error_message;
  void* internal_data;
};
enum type : int {
  kBoolean = 1, kTinyint = 2, kSmallint = 3, kInteger = 4, kBigint = 5, kUtinyint = 6, kUsmallint = 7,
  kUinteger = 8, kUbigint = 9, kFloat = 10, kDouble = 11, kTimestamp = 12, kDate = 13, kHugeint = 16, kVarchar = 17, kDecimal = 19
};
struct hugeint {
  uint64_t lower;
  int64_t upper;
};
// duckdb_string_t: 16 bytes; up to 12 characters inline, else a pointer.
struct string_t {
  uint32_t length;
  char prefix_or_inline[12];
  const char* data() const {
    if (length <= 12) return prefix_or_inline;
    const char* p;
    __builtin_memcpy(&p, prefix_or_inline + 4, sizeof p);
    return p;
  }
};
}  // namespace duck

class DuckdbLibrary {
 public:
  explicit DuckdbLibrary(const std::string& path) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error(std::string("dlopen failed: ") + ::dlerror());
    bind(open, "duckdb_open");
    bind(close, "duckdb_close");
    bind(connect, "duckdb_connect");
    bind(disconnect, "duckdb_disconnect");
    bind(query, "duckdb_query");
    bind(destroy_result, "duckdb_destroy_result");
    bind(result_error, "duckdb_result_error");
    bind(column_count, "duckdb_column_count");
    bind(column_type, "duckdb_column_type");
    bind(fetch_chunk, "duckdb_fetch_chunk");
    bind(chunk_size, "duckdb_data_chunk_get_size");
    bind(chunk_vector, "duckdb_data_chunk_get_vector");
    bind(vector_data, "duckdb_vector_get_data");
    bind(vector_validity, "duckdb_vector_get_validity");
    bind(destroy_chunk, "duckdb_destroy_data_chunk");
    bind(library_version, "duckdb_library_version");
    bind(column_logical_type, "duckdb_column_logical_type");
    bind(decimal_scale, "duckdb_decimal_scale");
    bind(decimal_internal_type, "duckdb_decimal_internal_type");
    bind(destroy_logical_type, "duckdb_destroy_logical_type");
  }
  DuckdbLibrary(const DuckdbLibrary&) = delete;
  DuckdbLibrary& operator=(const DuckdbLibrary&) = delete;
  // Never dlclose'd: DuckDB's threads may outlive a close of the database.

  duck::state (*open)(const char*, duck::database*) = nullptr;
  void (*close)(duck::database*) = nullptr;
  duck::state (*connect)(duck::database, duck::connection*) = nullptr;
  void (*disconnect)(duck::connection*) = nullptr;
  duck::state (*query)(duck::connection, const char*, duck::result*) = nullptr;
  void (*destroy_result)(duck::result*) = nullptr;
  const char* (*result_error)(duck::result*) = nullptr;
  duck::idx_t (*column_count)(duck::result*) = nullptr;
  duck::type (*column_type)(duck::result*, duck::idx_t) = nullptr;
  duck::data_chunk (*fetch_chunk)(duck::result) = nullptr;
  duck::idx_t (*chunk_size)(duck::data_chunk) = nullptr;
  duck::vector (*chunk_vector)(duck::data_chunk, duck::idx_t) = nullptr;
  void* (*vector_data)(duck::vector) = nullptr;
  uint64_t* (*vector_validity)(duck::vector) = nullptr;
  void (*destroy_chunk)(duck::data_chunk*) = nullptr;
  const char* (*library_version)() = nullptr;
  duck::logical_type (*column_logical_type)(duck::result*, duck::idx_t) = nullptr;
  uint8_t (*decimal_scale)(duck::logical_type) = nullptr;
  duck::type (*decimal_internal_type)(duck::logical_type) = nullptr;
  void (*destroy_logical_type)(duck::logical_type*) = nullptr;

 private:
  template <typename F>
  void bind(F& fn, const char* name) {
    void* p = ::dlsym(handle_, name);
    if (p == nullptr) throw std::runtime_error(std::string("libduckdb lacks ") + name);
    fn = reinterpret_cast<F>(p);
  }
  void* handle_ = nullptr;
};

}  // namespace tally::bench
