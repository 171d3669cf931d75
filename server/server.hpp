#pragma once
// The PostgreSQL listener of tallyd: accepts connections on
// Config::listen_address/port (Boost.Asio) and runs one protocol::Session per
// connection on its own thread with blocking I/O, as PostgreSQL runs one
// process per connection: a slow or stalled client only ever holds its own
// thread. TLS is offered after SSLRequest when a certificate and key are set.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "config/config.hpp"
#include "protocol/query_handler.hpp"
#include "server/session_registry.hpp"

namespace tally::server {

class SocketStream;

class Server {
 public:
  // The config and factory must outlive the server.
  Server(const config::Config& config, protocol::QueryHandlerFactory& factory);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts accepting on a background thread. Throws
  // std::runtime_error naming the address when the listener cannot be set up
  // and when the TLS files cannot be loaded.
  void start();
  // The bound port (useful with port 0).
  uint16_t port() const { return port_; }

  // Graceful stop: no new connections; idle sessions get FATAL 57P01 and
  // close at once; running statements may finish within `grace` (their
  // sessions then close the same way), after which they are cancelled with
  // FATAL 57P01; connections still stuck after that (a client that stopped
  // reading) are cut. Returns when every session thread has ended. Idempotent.
  void stop(std::chrono::milliseconds grace);
  // Blocks until stop() has completed.
  void wait();

  int connections() const { return registry_.connections(); }
  size_t sessions() const { return registry_.sessions(); }

 private:
  struct Connection {
    std::unique_ptr<SocketStream> stream;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void accept_next();
  void serve(Connection& connection);
  // Joins the threads of connections that have ended.
  void reap();

  const config::Config& config_;
  protocol::QueryHandlerFactory& factory_;
  SessionRegistry registry_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread accept_thread_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};

  std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Connection> connections_;
  bool stopped_ = false;
};

}  // namespace tally::server
