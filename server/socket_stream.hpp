#pragma once
// A protocol::ByteStream over one accepted TCP connection, plain or upgraded
// to TLS after SSLRequest. Reads block in short slices so that a
// server shutdown reaches idle sessions (FATAL 57P01) without closing their
// sockets under them.
//
// The descriptor is taken out of Asio (basic_socket::release) when the stream
// is made: Asio registers every socket it owns with the io_context's epoll
// set, edge-triggered, so each message a client sent woke the accept thread
// once more, one extra thread wake-up per round trip (strace: one epoll_wait
// per recvfrom). The session thread does its own blocking I/O on the bare
// descriptor.
//
// A read is one blocking recv() (SO_RCVTIMEO of one poll slice, so that the
// shutdown flag and the startup deadline are looked at while a client is
// idle).
#include <atomic>
#include <chrono>
#include <optional>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <openssl/ssl.h>
#include <sys/types.h>

#include "protocol/byte_stream.hpp"

namespace tally::server {

class SocketStream : public protocol::ByteStream {
 public:
  // tls may be null (SSLRequest is answered 'N'). stopping is the server's
  // shutdown flag, checked while waiting for input. Until session_established()
  // the connection is closed at startup_deadline (authentication_timeout) and
  // counts in *authenticating (the server's bound on threads before
  // authentication), which may be null.
  SocketStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls,
               const std::atomic<bool>& stopping,
               std::chrono::steady_clock::time_point startup_deadline,
               std::atomic<int>* authenticating);
  ~SocketStream() override;

  size_t read_some(std::span<char> buffer) override;
  void write_all(std::string_view bytes) override;
  bool tls_available() const override { return tls_context_ != nullptr; }
  void start_tls() override;
  bool is_tls() const override { return tls_ != nullptr; }
  bool peer_is_loopback() const override { return loopback_; }
  std::string peer_host() const override { return peer_host_; }
  // Called on the session's thread: ends the startup deadline and leaves the
  // count of authenticating connections.
  void session_established() override;
  // Checked once a poll slice while the session waits for input.
  void watch_for_termination(const CancelToken* token) override { termination_.store(token); }

  // Unblocks a session stuck writing to a stalled client (last step of a
  // shutdown). Safe to call from another thread.
  void force_close();
  // True when the peer has closed or reset the connection (POLLRDHUP), for
  // cancelling the statement of a client that vanished. Safe from another thread.
  bool peer_gone() const;

 private:
  // recv(flags) that blocks until input or EOF, a slice at a time; throws
  // FATAL 57P01 on shutdown, ConnectionLost at the startup deadline or on a
  // socket error.
  ssize_t blocking_recv(char* data, size_t size, int flags);
  // A pg_terminate_backend reached this session (watch_for_termination).
  bool terminated() const;
  void set_receive_timeout(std::chrono::microseconds timeout);
  // Returns once the TLS socket has input (a record, or EOF): a blocking peek.
  void await_tls_input();

  // Write all of bytes to the plain socket (send with MSG_NOSIGNAL).
  void send_all(std::string_view bytes);

  int fd_;  // owned; closed by the destructor
  boost::asio::ssl::context* tls_context_;
  // OpenSSL directly on the descriptor, as PostgreSQL does: no read-ahead
  // buffer outside OpenSSL, so a peek at the socket plus SSL_pending() see
  // every input.
  SSL* tls_ = nullptr;
  const std::atomic<bool>& stopping_;
  std::atomic<const CancelToken*> termination_{nullptr};
  // A client has this long to finish startup and authentication.
  std::optional<std::chrono::steady_clock::time_point> startup_deadline_;
  std::atomic<int>* authenticating_;
  bool loopback_ = false;
  std::string peer_host_;
};

}  // namespace tally::server
