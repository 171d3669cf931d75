#pragma once
// The PostgreSQL listener of tallyd: accepts connections on
// Config::listen_address/port (Boost.Asio) and runs one protocol::ProtocolSession per
// connection on its own thread with blocking I/O, as PostgreSQL runs one
// process per connection: a slow or stalled client only ever holds its own
// thread. TLS is offered after SSLRequest when a certificate and key are set.
//
// Before authentication a connection is cheap and bounded, so that nobody can
// lock clients out or exhaust the server without logging in: an accepted
// socket waits on the accept thread's event loop (a descriptor, no thread)
// until its first bytes arrive, for at most authentication_timeout; then it
// gets a session thread, but at most max_connections threads authenticate at
// once (the excess is answered 53300 at once). Failure to create a thread is
// answered to that client alone (53300, or 53200 for lack of memory), and when
// descriptors run out the accept loop answers queued clients 53300 with a
// reserve descriptor and backs off instead of spinning.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl/context.hpp>

#include "config/config.hpp"
#include "common/query_handler.hpp"
#include "server/session_registry.hpp"

namespace tally::server {

class SocketStream;
}  // namespace tally::server
namespace tally::protocol {
class ProtocolSession;
}  // namespace tally::protocol
namespace tally::server {

class Server {
 public:
  // Where each new connection takes its configuration from (users, limits):
  // SIGHUP may replace it while the server runs; a session keeps the snapshot
  // it started with. The listener and TLS use the first snapshot.
  using ConfigSource = std::function<std::shared_ptr<const config::Config>()>;

  // The factory must outlive the server.
  Server(ConfigSource config_source, tally::QueryHandlerFactory& factory);
  // A fixed configuration (copied).
  Server(const config::Config& config, tally::QueryHandlerFactory& factory);
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
  // The same steps one by one, for server/lifecycle.hpp's run_shutdown:
  void stop(std::chrono::milliseconds grace);
  // Closes the listener; from now on no session reads another message: idle
  // ones end with FATAL 57P01 within a poll slice, busy ones after their statement.
  void stop_accepting();
  // Connections still open (after stop_accepting: those running a statement).
  size_t open_connections() const { return static_cast<size_t>(registry_.connections()); }
  // Running statements stop with FATAL 57P01 at their next cancellation check.
  void cancel_statements() { registry_.cancel_all_for_shutdown(); }
  // Waits (bounded) for sessions to end, cuts connections still stuck, joins
  // every session thread.
  void close_sessions();
  // Blocks until stop() has completed.
  void wait();

  int connections() const { return registry_.connections(); }
  size_t sessions() const { return registry_.sessions(); }

 private:
  struct Connection {
    std::shared_ptr<const config::Config> config;  // the snapshot this session runs with
    std::unique_ptr<SocketStream> stream;
    protocol::ProtocolSession* session = nullptr;  // while its thread runs one (under mutex_)
    std::thread thread;
    std::atomic<bool> done{false};
  };

  struct PendingStartup;

  void accept_next();
  // An accept failed: EMFILE and its kind answer the backlog and back off.
  void on_accept_error(const boost::system::error_code& ec);
  // Accepts every queued connection through the reserve descriptor and
  // answers it 53300 (descriptors are exhausted).
  void refuse_backlog();
  // Waits on the event loop for the connection's first bytes (or its
  // authentication_timeout), then starts its session.
  void await_startup(boost::asio::ip::tcp::socket socket);
  void start_session(PendingStartup& pending);
  void serve(Connection& connection);
  // Joins the threads of connections that have ended.
  void reap();
  // Every kVanishedCheckInterval: cancels the statement of each session whose
  // client closed its connection, so that a long silent query does not run
  // on for nobody (PostgreSQL's client_connection_check_interval).
  void watch_vanished_clients();
  // Every session thread has ended (mutex_ held).
  bool all_done() const;

  ConfigSource config_source_;
  std::shared_ptr<const config::Config> initial_config_;
  tally::QueryHandlerFactory& factory_;
  SessionRegistry registry_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::chrono::milliseconds accept_backoff_;
  // Kept open to be given up when descriptors run out, so that a queued
  // client can be accepted and told why (accept thread only).
  int reserve_fd_ = -1;
  // Session threads that have not finished authentication yet.
  std::atomic<int> authenticating_{0};
  std::thread accept_thread_;
  std::thread watchdog_thread_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};

  std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Connection> connections_;
  bool stopped_ = false;
};

}  // namespace tally::server
