#include "server/server.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <csignal>
#include <stdexcept>

#include "common/thread_name.hpp"
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
      registry_(initial_config_->max_connections),
      tls_(make_tls_context(*initial_config_)),
      acceptor_(io_) {}

Server::Server(const config::Config& config, tally::QueryHandlerFactory& factory)
    : Server([fixed = std::make_shared<const config::Config>(config)] { return fixed; },
             factory) {}

Server::~Server() { stop(std::chrono::milliseconds(0)); }

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

void Server::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || stopping_) return;
      // EMFILE and the like: keep serving the sessions we have, retry later.
      accept_next();
      return;
    }
    std::lock_guard lock(mutex_);
    reap();
    if (stopping_) return;
    registry_.connection_opened();
    Connection& connection = connections_.emplace_back();
    connection.config = config_source_();
    registry_.set_max_connections(connection.config->max_connections);
    connection.stream = std::make_unique<SocketStream>(std::move(socket), tls_.get(), stopping_);
    connection.thread = std::thread([this, &connection] {
      name_this_thread("tally-session");
      serve(connection);
    });
    accept_next();
  });
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
