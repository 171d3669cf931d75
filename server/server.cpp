#include "server/server.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/error_encoding.hpp"
#include "protocol/protocol_session.hpp"
#include "server/socket_stream.hpp"
#include "server/tls_context.hpp"

namespace tally::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {
// After the grace period, how long cut connections get to unwind.
constexpr std::chrono::seconds kUnwindAfterCut{10};
// How often busy sessions are checked for a client that went away.
constexpr std::chrono::seconds kVanishedCheckInterval{1};
// PostgreSQL's default listen backlog is MaxConnections * 2, at most SOMAXCONN.
constexpr int kMinBacklog = 128;
// After an accept failed for lack of descriptors or memory, the next try
// waits this long, doubling up to the maximum: freed descriptors are noticed
// within half a second, and a persistent shortage costs a few wake-ups a second.
constexpr std::chrono::milliseconds kAcceptBackoffMin{10};
constexpr std::chrono::milliseconds kAcceptBackoffMax{500};

bool out_of_resources(const boost::system::error_code& ec) {
  const int value = ec.value();
  return ec.category() == boost::system::system_category() &&
         (value == EMFILE || value == ENFILE || value == ENOBUFS || value == ENOMEM);
}

Error too_many_clients() {
  return Error(SqlState::too_many_connections, "sorry, too many clients already", Severity::fatal);
}

// Answers a connection that gets no session with one ErrorResponse, without
// blocking (the accept thread calls this): a client that does not read loses it.
void send_refusal(int fd, const Error& error) {
  std::string bytes;
  protocol::encode_error(error, bytes);
  (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  // Reads what the client sent (its startup packet): closing with unread
  // input would reset the connection and could discard the answer unread.
  char sink[1024];
  while (::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
  ::shutdown(fd, SHUT_WR);
}

tcp::endpoint listen_endpoint(const std::string& address, uint16_t port) {
  if (address == "*" || address.empty()) return tcp::endpoint(tcp::v6(), port);
  boost::system::error_code ec;
  auto parsed = asio::ip::make_address(address, ec);
  if (!ec) return tcp::endpoint(parsed, port);
  asio::io_context io;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(address, std::to_string(port), ec);
  if (ec || results.empty()) {
    throw std::runtime_error("could not resolve listen address \"" + address + "\": " +
                             ec.message());
  }
  return results.begin()->endpoint();
}
}  // namespace

Server::Server(ConfigSource config_source, tally::QueryHandlerFactory& factory)
    : config_source_(std::move(config_source)),
      initial_config_(config_source_()),
      factory_(factory),
      registry_(initial_config_->max_connections, initial_config_->superuser_reserved_connections),
      tls_(make_tls_context(*initial_config_)),
      acceptor_(io_),
      accept_retry_(io_),
      accept_backoff_(kAcceptBackoffMin) {
  install_backend_signaller(&registry_);
  install_backend_activity_source(&registry_);
}

Server::Server(const config::Config& config, tally::QueryHandlerFactory& factory)
    : Server([fixed = std::make_shared<const config::Config>(config)] { return fixed; },
             factory) {}

Server::~Server() {
  stop(std::chrono::milliseconds(0));
  if (backend_signaller() == &registry_) install_backend_signaller(nullptr);
  if (backend_activity_source() == &registry_) install_backend_activity_source(nullptr);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

void Server::start() {
  // A peer that vanishes makes write()/SSL_write() raise SIGPIPE; the session
  // must see EPIPE instead (OpenSSL writes to the descriptor without MSG_NOSIGNAL).
  ::signal(SIGPIPE, SIG_IGN);
  const config::Config& config = *initial_config_;
  tcp::endpoint endpoint = listen_endpoint(config.listen_address, config.port);
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && endpoint.address().is_v6()) acceptor_.set_option(asio::ip::v6_only(false), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(std::max(kMinBacklog, config.max_connections * 2), ec);
  if (ec) {
    throw std::runtime_error("could not listen on " + config.listen_address + ":" +
                             std::to_string(config.port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  accept_next();
  accept_thread_ = std::thread([this] {
    name_this_thread("tally-accept");
    io_.run();
  });
  watchdog_thread_ = std::thread([this] {
    name_this_thread("tally-watchdog");
    watch_vanished_clients();
  });
}

void Server::watch_vanished_clients() {
  std::unique_lock lock(mutex_);
  while (!stopped_) {
    changed_.wait_for(lock, kVanishedCheckInterval);
    for (auto& c : connections_) {
      if (c.session != nullptr && c.stream &&
          c.session->state() == protocol::ProtocolSession::State::in_query && c.stream->peer_gone() &&
          c.session->cancel_token().reason() == CancelReason::none) {
        c.session->cancel_token().request(CancelReason::user_request);
      }
    }
  }
}

struct Server::PendingStartup {
  PendingStartup(tcp::socket s, asio::io_context& io) : socket(std::move(s)), deadline(io) {}
  tcp::socket socket;
  asio::steady_timer deadline;  // authentication_timeout, from the accept
  std::chrono::steady_clock::time_point timeout_at;
  std::shared_ptr<const config::Config> config;
};

void Server::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || stopping_) return;
      on_accept_error(ec);
      return;
    }
    accept_backoff_ = kAcceptBackoffMin;
    await_startup(std::move(socket));
    accept_next();
  });
}

void Server::on_accept_error(const boost::system::error_code& ec) {
  if (!out_of_resources(ec)) {
    // ECONNABORTED and the like concern one connection: go on at once.
    accept_next();
    return;
  }
  refuse_backlog();
  log::warning("accept_failed", {{"error", ec.message()},
                                 {"retry_ms", static_cast<int64_t>(accept_backoff_.count())}});
  accept_retry_.expires_after(accept_backoff_);
  accept_backoff_ = std::min(accept_backoff_ * 2, kAcceptBackoffMax);
  accept_retry_.async_wait([this](boost::system::error_code wait_ec) {
    if (!wait_ec && !stopping_) accept_next();
  });
}

void Server::refuse_backlog() {
  if (reserve_fd_ >= 0) {
    ::close(reserve_fd_);
    reserve_fd_ = -1;
  }
  const int listener = acceptor_.native_handle();
  while (true) {
    pollfd ready{listener, POLLIN, 0};
    if (::poll(&ready, 1, 0) <= 0) break;  // nobody else is waiting
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) break;  // the reserve was taken by another thread meanwhile
    send_refusal(fd, too_many_clients());
    ::close(fd);
    registry_.connection_refused(too_many_clients());
  }
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void Server::await_startup(tcp::socket socket) {
  auto pending = std::make_shared<PendingStartup>(std::move(socket), io_);
  pending->config = config_source_();
  const std::chrono::seconds timeout(pending->config->authentication_timeout_s);
  pending->timeout_at = std::chrono::steady_clock::now() + timeout;
  // Like PostgreSQL, a client too slow to start is dropped without an answer.
  pending->deadline.expires_after(timeout);
  pending->deadline.async_wait([pending](boost::system::error_code ec) {
    if (ec) return;  // cancelled: the client spoke in time
    boost::system::error_code ignored;
    pending->socket.close(ignored);
  });
  pending->socket.async_wait(tcp::socket::wait_read, [this, pending](boost::system::error_code ec) {
    pending->deadline.cancel();
    if (ec || stopping_ || !pending->socket.is_open()) return;
    start_session(*pending);
  });
}

void Server::start_session(PendingStartup& pending) {
  std::lock_guard lock(mutex_);
  reap();
  if (stopping_) return;
  const config::Config& config = *pending.config;
  registry_.set_limits(config.max_connections, config.superuser_reserved_connections);
  if (authenticating_.load() >= config.max_connections) {
    send_refusal(pending.socket.native_handle(), too_many_clients());
    registry_.connection_refused(too_many_clients());
    return;  // the socket closes with pending
  }
  registry_.connection_opened();
  Connection& connection = connections_.emplace_back();
  connection.config = pending.config;
  connection.stream = std::make_unique<SocketStream>(std::move(pending.socket), tls_.get(),
                                                     stopping_, pending.timeout_at,
                                                     &authenticating_);
  try {
    connection.thread = std::thread([this, &connection] {
      name_this_thread("tally-session");
      serve(connection);
    });
  } catch (const std::system_error& e) {
    // A pids limit, RLIMIT_NPROC or memory: this client is told, the server goes on.
    Error error = e.code() == std::errc::not_enough_memory
                      ? Error(SqlState::out_of_memory, "out of memory", Severity::fatal)
                      : Error(SqlState::too_many_connections,
                              std::string("could not fork new process for connection: ") +
                                  e.code().message(),
                              Severity::fatal);
    log::warning("session_thread_failed", {{"error", e.what()}});
    try {
      std::string bytes;
      protocol::encode_error(error, bytes);
      connection.stream->write_all(bytes);
    } catch (const std::exception&) {
      // The client is gone already.
    }
    connections_.pop_back();
    registry_.connection_closed();
    registry_.connection_refused(error);
  }
}

void Server::serve(Connection& connection) {
  {
    protocol::ProtocolSession session(*connection.config, factory_, registry_, *connection.stream);
    {
      std::lock_guard lock(mutex_);
      connection.session = &session;
    }
    session.run();
    std::lock_guard lock(mutex_);
    connection.session = nullptr;
  }
  registry_.connection_closed();
  std::lock_guard lock(mutex_);
  connection.stream.reset();  // the client sees the connection close now
  connection.done = true;
  changed_.notify_all();
}

void Server::reap() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done) {
      it->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void Server::stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
  }
  stop_accepting();
  {
    // Running statements may finish within the grace period...
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, grace, [this] { return all_done(); });
  }
  // ...then they are cancelled with FATAL 57P01.
  cancel_statements();
  close_sessions();
}

void Server::stop_accepting() {
  if (stopping_.exchange(true)) return;
  asio::post(io_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
  if (accept_thread_.joinable()) accept_thread_.join();
  io_.stop();
}

bool Server::all_done() const {
  for (auto& c : connections_) {
    if (!c.done) return false;
  }
  return true;
}

void Server::close_sessions() {
  stop_accepting();
  std::unique_lock lock(mutex_);
  if (stopped_) return;
  changed_.wait_for(lock, kUnwindAfterCut, [this] { return all_done(); });
  // Connections still stuck (a client that stopped reading) are cut.
  for (auto& c : connections_) {
    if (!c.done && c.stream) c.stream->force_close();
  }
  changed_.wait_for(lock, kUnwindAfterCut, [this] { return all_done(); });
  // Threads still running here are inside a statement that ignores
  // cancellation; joining waits for them rather than freeing their state.
  for (auto& c : connections_) {
    lock.unlock();
    if (c.thread.joinable()) c.thread.join();
    lock.lock();
  }
  connections_.clear();
  stopped_ = true;
  changed_.notify_all();
  lock.unlock();
  if (watchdog_thread_.joinable()) watchdog_thread_.join();
}

void Server::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return stopped_; });
}

}  // namespace tally::server
