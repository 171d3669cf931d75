#pragma once
// The byte transport under a ProtocolSession: a socket (plain or TLS) in the server,
// a scripted buffer in tests and the fuzzer. Blocking by design: one session
// runs on one thread, as a PostgreSQL backend process does.
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/cancel.hpp"

namespace tally::protocol {

// The peer is gone or the transport failed: the session ends without
// answering (there is nobody to answer), releasing everything it holds.
class ConnectionLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads at least one byte; returns 0 at end of stream. Throws ConnectionLost
  // on transport failure and Error (FATAL 57P01) when the server shuts down.
  virtual size_t read_some(std::span<char> buffer) = 0;
  // Writes everything or throws ConnectionLost.
  virtual void write_all(std::string_view bytes) = 0;
  // Whether an SSLRequest can be answered 'S'.
  virtual bool tls_available() const { return false; }
  // Performs the TLS handshake after 'S' was written. Throws ConnectionLost on failure.
  virtual void start_tls() { throw ConnectionLost("TLS is not available on this stream"); }
  virtual bool is_tls() const { return false; }
  // pg_hba-like decisions: trust is honoured for loopback peers only.
  virtual bool peer_is_loopback() const = 0;
  virtual std::string peer_host() const = 0;
  // Startup and authentication are over: a stream may lift the time limit it
  // puts on them (PostgreSQL's authentication_timeout).
  virtual void session_established() {}
  // While the session waits for input, a shutdown requested on `token`
  // (pg_terminate_backend of an idle session) ends the wait with FATAL 57P01,
  // as the server's own shutdown does. A stream may leave it to the next
  // statement (the default), which the token stops as well.
  virtual void watch_for_termination(const CancelToken* /*token*/) {}
};

}  // namespace tally::protocol
