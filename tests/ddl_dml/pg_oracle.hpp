#pragma once
// A scratch PostgreSQL 15 for differential tests: initdb into a temp dir (as
// user postgres when running as root), start on a free port with the socket in
// the temp dir, stop and remove on destruction. Every wait is bounded.
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace tally::testing {

class PgOracle {
 public:
  PgOracle() {
    const std::string bin = "/usr/lib/postgresql/15/bin";
    if (!std::filesystem::exists(bin + "/initdb")) throw std::runtime_error("PostgreSQL 15 is not installed at " + bin);
    dir_ = (std::filesystem::temp_directory_path() / ("tally_pg_oracle_" + std::to_string(getpid()))).string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string as_pg = getuid() == 0 ? "runuser -u postgres -- " : "";
    if (getuid() == 0) sh("chown postgres " + dir_);
    port_ = 30000 + getpid() % 20000;
    if (sh(as_pg + bin + "/initdb -D " + dir_ + "/data -A trust -U postgres >" + dir_ + "/initdb.log 2>&1") != 0)
      throw std::runtime_error("initdb failed, see " + dir_ + "/initdb.log");
    for (int attempt = 0; attempt < 20; ++attempt, ++port_) {
      if (sh(as_pg + bin + "/pg_ctl -D " + dir_ + "/data -o \"-p " + std::to_string(port_) + " -k " + dir_ +
             " -c listen_addresses=''\" -l " + dir_ + "/pg.log -w -t 60 start >/dev/null 2>&1") == 0) {
        started_ = true;
        break;
      }
    }
    if (!started_) throw std::runtime_error("could not start PostgreSQL, see " + dir_ + "/pg.log");
    conninfo_ = "host=" + dir_ + " port=" + std::to_string(port_) + " user=postgres dbname=postgres";
  }
  ~PgOracle() {
    if (started_) {
      const std::string as_pg = getuid() == 0 ? "runuser -u postgres -- " : "";
      sh(as_pg + "/usr/lib/postgresql/15/bin/pg_ctl -D " + dir_ + "/data -m immediate -w -t 60 stop >/dev/null 2>&1");
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& conninfo() const { return conninfo_; }

 private:
  static int sh(const std::string& cmd) {
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string dir_;
  std::string conninfo_;
  int port_ = 0;
  bool started_ = false;
};

}  // namespace tally::testing
