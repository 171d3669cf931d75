#pragma once
// A database opened in process over a fresh temporary data directory, with
// one session, for tests that run SQL without a server: removed with its
// directory when the test ends.
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>

#include "common/query_handler.hpp"
#include "config/config.hpp"
#include "executor/database.hpp"

namespace tally::executor::testing {

class EmbeddedDatabase {
 public:
  // `prefix` names the directory; `configure` adjusts the settings (chunk
  // rows, CPU threads) before the database opens.
  explicit EmbeddedDatabase(const std::string& prefix, const std::function<void(config::Config&)>& configure = {}) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    dir_ = pattern;
    config::Config config;
    config.data_dir = dir_.string();
    if (configure) configure(config);
    database_ = Database::open(config);
    tally::SessionInfo info;
    info.user = "tally";
    info.database = "tally";
    session_ = database_->handler_factory().create(info);
  }
  ~EmbeddedDatabase() {
    session_.reset();
    database_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  EmbeddedDatabase(const EmbeddedDatabase&) = delete;
  EmbeddedDatabase& operator=(const EmbeddedDatabase&) = delete;

  Database& database() { return *database_; }
  tally::QueryHandler& session() { return *session_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<tally::QueryHandler> session_;
};

}  // namespace tally::executor::testing
