#include "server/socket_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <sys/socket.h>

#include <openssl/err.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "common/error.hpp"

namespace tally::server {

namespace asio = boost::asio;

namespace {
// How often a waiting session looks at the shutdown flag.
constexpr std::chrono::milliseconds kPollSlice{200};
}  // namespace

SocketStream::SocketStream(asio::ip::tcp::socket socket, asio::ssl::context* tls,
                           const std::atomic<bool>& stopping,
                           std::chrono::steady_clock::time_point startup_deadline,
                           std::atomic<int>* authenticating)
    : fd_(-1),
      tls_context_(tls),
      stopping_(stopping),
      startup_deadline_(startup_deadline),
      authenticating_(authenticating) {
  if (authenticating_) authenticating_->fetch_add(1);
  boost::system::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (!ec) {
    auto address = endpoint.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    }
    loopback_ = address.is_loopback();
    peer_host_ = address.to_string();
  }
  // Small protocol messages must not wait for Nagle.
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  fd_ = socket.release(ec);
  if (ec) fd_ = -1;  // every read and write then fails: the session ends at once
  // Blocking descriptor: reads block for at most a poll slice (then look at
  // the shutdown flag and try again), writes block.
  if (fd_ >= 0) {
    const int flags = ::fcntl(fd_, F_GETFL, 0);
    if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    set_receive_timeout(kPollSlice);
  }
}

SocketStream::~SocketStream() {
  if (authenticating_) authenticating_->fetch_sub(1);
  if (tls_) SSL_free(tls_);
  if (fd_ >= 0) {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
  }
}

static Error shutdown_error() {
  return Error(SqlState::admin_shutdown, "terminating connection due to administrator command",
               Severity::fatal);
}

bool SocketStream::terminated() const {
  const CancelToken* token = termination_.load(std::memory_order_relaxed);
  return token != nullptr && token->reason() == CancelReason::shutdown;
}

void SocketStream::set_receive_timeout(std::chrono::microseconds timeout) {
  timeval value{static_cast<time_t>(timeout.count() / 1000000),
                static_cast<suseconds_t>(timeout.count() % 1000000)};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &value, sizeof value);
}

ssize_t SocketStream::blocking_recv(char* data, size_t size, int flags) {
  while (true) {
    // Blocks until input, EOF or the receive timeout (one poll slice).
    ssize_t got = ::recv(fd_, data, size, flags);
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      throw protocol::ConnectionLost(std::string("recv failed: ") + std::strerror(errno));
    }
    // A slice passed without input.
    if (stopping_.load(std::memory_order_relaxed) || terminated()) throw shutdown_error();
    if (startup_deadline_ && std::chrono::steady_clock::now() > *startup_deadline_) {
      // Like PostgreSQL, a client too slow to authenticate is dropped without an answer.
      throw protocol::ConnectionLost("startup timeout");
    }
  }
}

size_t SocketStream::read_some(std::span<char> buffer) {
  // During shutdown no session reads (and so starts) another message.
  if (stopping_.load(std::memory_order_relaxed) || terminated()) throw shutdown_error();
  if (tls_) {
    int size = static_cast<int>(std::min<size_t>(buffer.size(), INT32_MAX));
    while (true) {
      // Decrypted bytes may already wait inside OpenSSL, invisible to poll().
      if (SSL_pending(tls_) == 0) await_tls_input();
      ERR_clear_error();
      int n = SSL_read(tls_, buffer.data(), size);
      if (n > 0) return static_cast<size_t>(n);
      int error = SSL_get_error(tls_, n);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      // Post-handshake records (TLS 1.3 tickets, key updates) carry no data.
      if (error == SSL_ERROR_WANT_READ) continue;
      if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;  // peer closed
      throw protocol::ConnectionLost("TLS read failed");
    }
  }
  // One blocking recv() waits for the next message, or returns it at once
  // when it is there: one system call per read.
  return static_cast<size_t>(blocking_recv(buffer.data(), buffer.size(), 0));
}

void SocketStream::await_tls_input() {
  // Peeks at the socket (the record stays for SSL_read); 0 (EOF) is input too.
  char byte;
  blocking_recv(&byte, 1, MSG_PEEK);
}

void SocketStream::write_all(std::string_view bytes) {
  if (tls_) {
    while (!bytes.empty()) {
      ERR_clear_error();
      int chunk = static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX));
      int n = SSL_write(tls_, bytes.data(), chunk);
      if (n <= 0) throw protocol::ConnectionLost("TLS write failed");
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return;
  }
  send_all(bytes);
}

void SocketStream::send_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent >= 0) {
      bytes.remove_prefix(static_cast<size_t>(sent));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // Only if something set O_NONBLOCK again: wait for room.
      pollfd fd{fd_, POLLOUT, 0};
      ::poll(&fd, 1, static_cast<int>(kPollSlice.count()));
      continue;
    }
    throw protocol::ConnectionLost(std::string("send failed: ") + std::strerror(errno));
  }
}

void SocketStream::start_tls() {
  if (!tls_context_) throw protocol::ConnectionLost("TLS is not configured");
  tls_ = SSL_new(tls_context_->native_handle());
  if (tls_ == nullptr || SSL_set_fd(tls_, fd_) != 1) {
    throw protocol::ConnectionLost("could not set up TLS");
  }
  // The handshake blocks inside OpenSSL: bound it by the startup time left.
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(
      *startup_deadline_ - std::chrono::steady_clock::now());
  if (left.count() <= 0) throw protocol::ConnectionLost("startup timeout");
  set_receive_timeout(left);
  ERR_clear_error();
  int accepted = SSL_accept(tls_);
  set_receive_timeout(kPollSlice);
  if (accepted != 1) throw protocol::ConnectionLost("TLS handshake failed");
}

void SocketStream::session_established() {
  startup_deadline_.reset();
  if (authenticating_) authenticating_->fetch_sub(1);
  authenticating_ = nullptr;
}

bool SocketStream::peer_gone() const {
  pollfd fd{fd_, POLLRDHUP, 0};
  return ::poll(&fd, 1, 0) > 0 && (fd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void SocketStream::force_close() {
  // ::shutdown on the descriptor is thread-safe and wakes blocked send/recv.
  ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace tally::server
