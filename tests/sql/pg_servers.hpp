#pragma once
// Starting the servers tests and benchmarks talk to: a throwaway PostgreSQL 15
// (initdb in a temp dir, run as user postgres when we are root, a free port,
// locale C.UTF-8 so that collation and case mapping are deterministic) and a
// tallyd of this build with a temp data directory. Both are stopped and their
// directories removed on destruction; every wait is bounded.
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

namespace tally::testing {

inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

inline bool wait_until_accepting(const std::string& conninfo, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (PQping(conninfo.c_str()) == PQPING_OK) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

inline std::string make_temp_dir(const char* prefix) {
  std::string pattern = std::string("/tmp/") + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

class PostgresServer {
 public:
  static constexpr const char* kBin = "/usr/lib/postgresql/15/bin";

  PostgresServer() {
    dir_ = make_temp_dir("tally-pg");
    port_ = free_port();
    const bool root = ::geteuid() == 0;
    if (root) {
      const passwd* pw = ::getpwnam("postgres");
      if (pw == nullptr) throw std::runtime_error("user postgres does not exist");
      if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) throw std::runtime_error("chown failed");
    }
    const std::string as = root ? "runuser -u postgres -- " : "";
    run(as + kBin + "/initdb -D " + dir_ + "/data -A trust -U postgres -E UTF8 --locale=C.UTF-8 >" + dir_ +
        "/initdb.log 2>&1");
    run(as + kBin + "/pg_ctl -D " + dir_ + "/data -w -t 60 -l " + dir_ + "/server.log -o \"-p " +
        std::to_string(port_) + " -k " + dir_ + " -c listen_addresses=''\" start >/dev/null 2>&1");
    conninfo_ = "host=" + dir_ + " port=" + std::to_string(port_) + " user=postgres dbname=postgres";
    if (!wait_until_accepting(conninfo_, std::chrono::seconds(30))) throw std::runtime_error("PostgreSQL did not start");
  }
  ~PostgresServer() {
    const std::string as = ::geteuid() == 0 ? "runuser -u postgres -- " : "";
    std::system((as + kBin + "/pg_ctl -D " + dir_ + "/data -m immediate -w -t 30 stop >/dev/null 2>&1").c_str());
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& conninfo() const { return conninfo_; }

 private:
  static void run(const std::string& command) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("command failed: " + command);
  }
  std::string dir_;
  int port_ = 0;
  std::string conninfo_;
};

class TallyServer {
 public:
  explicit TallyServer(const std::string& tallyd, const std::string& extra_args = "") : tallyd_(tallyd) {
    dir_ = make_temp_dir("tally-data");
    start(extra_args);
  }
  ~TallyServer() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Stops tallyd and starts it again on the same data directory with other
  // arguments (a benchmark comparing configurations on the data it loaded
  // once); the new process logs to a fresh log_path(), on a new port.
  void restart(const std::string& extra_args) {
    stop();
    start(extra_args);
  }
  const std::string& conninfo() const { return conninfo_; }
  pid_t pid() const { return pid_; }
  // tallyd's stdout and stderr (its log lines), until the destructor removes it.
  std::string log_path() const { return dir_ + "/tallyd.log"; }
  // The data directory tallyd was given.
  std::string data_dir() const { return dir_ + "/data"; }

 private:
  void start(const std::string& extra_args) {
    port_ = free_port();
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string command = "exec " + tallyd_ + " --port " + std::to_string(port_) + " --data-dir " +
                                  data_dir() + " " + extra_args + " >" + log_path() + " 2>&1";
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    conninfo_ = "host=127.0.0.1 port=" + std::to_string(port_) + " user=tally dbname=tally";
    if (!wait_until_accepting(conninfo_, std::chrono::seconds(30))) {
      stop();
      throw std::runtime_error("tallyd " + extra_args + " did not start (log in " + dir_ + ")");
    }
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) { pid_ = -1; return; }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string tallyd_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string conninfo_;
};

}  // namespace tally::testing
