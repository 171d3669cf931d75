#pragma once
// The HTTP admin endpoint (Boost.Beast) on its own thread and io_context, so a
// slow scrape never competes with PostgreSQL sessions. Routes and security are
// AdminRouter's (server/admin_router.hpp).
//
// From tallyd's main:
//   server::AdminServer admin(config, {.ready = ..., .tuning_json = ...});
//   if (config.http_port != 0) admin.start();   // throws naming address:port
//   ...
//   admin.stop();                                // also done by the destructor
#include <cstdint>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "server/admin_router.hpp"

namespace tally::server {

class AdminServer {
 public:
  // Listens on config.http_address:config.http_port with config.http_token.
  AdminServer(const config::Config& config, AdminCallbacks callbacks);
  // Port 0 binds an ephemeral port (tests); port() tells which.
  AdminServer(std::string address, uint16_t port, std::string token, AdminCallbacks callbacks);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Binds and starts serving. Throws std::runtime_error ("admin endpoint
  // 127.0.0.1:8080 (http_port): Address already in use") when it cannot bind.
  void start();
  // Stops accepting, drops open connections and joins the thread. Idempotent;
  // a stopped server is not started again (make a new one).
  void stop();
  bool running() const;
  uint16_t port() const;
  AdminRouter& router();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::server
