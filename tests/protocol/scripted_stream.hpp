#pragma once
// Test doubles for driving a protocol::ProtocolSession without sockets: a byte
// stream fed from a script (optionally in small chunks, optionally answering
// the server interactively), and a SessionHost that records what it is asked.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "protocol/byte_stream.hpp"
#include "protocol/session_host.hpp"

namespace tally::protocol::testing {

class ScriptedStream : public ByteStream {
 public:
  // responder: called when the script is exhausted, with everything the
  // server wrote so far; returns more input ("" ends the stream).
  using Responder = std::function<std::string(const std::string& output)>;

  explicit ScriptedStream(std::string input, size_t max_chunk = 1 << 20)
      : input_(std::move(input)), max_chunk_(max_chunk) {}

  size_t read_some(std::span<char> buffer) override {
    if (pos_ == input_.size() && responder_) {
      input_ += responder_(output);
    }
    size_t n = std::min({buffer.size(), input_.size() - pos_, max_chunk_});
    std::copy_n(input_.data() + pos_, n, buffer.data());
    pos_ += n;
    return n;
  }
  void write_all(std::string_view bytes) override {
    if (fail_writes) throw ConnectionLost("scripted write failure");
    output.append(bytes);
    write_ends.push_back(output.size());
  }
  bool tls_available() const override { return tls_available_; }
  void start_tls() override { tls_ = true; }
  bool is_tls() const override { return tls_; }
  bool peer_is_loopback() const override { return loopback_; }
  std::string peer_host() const override { return loopback_ ? "127.0.0.1" : "192.0.2.7"; }

  void set_responder(Responder responder) { responder_ = std::move(responder); }
  void set_loopback(bool loopback) { loopback_ = loopback; }
  void set_tls_available(bool available) { tls_available_ = available; }

  std::string output;
  // Where each write_all ended in `output`: what the client received at once.
  std::vector<size_t> write_ends;
  bool fail_writes = false;

 private:
  std::string input_;
  size_t pos_ = 0;
  size_t max_chunk_;
  Responder responder_;
  bool loopback_ = true;
  bool tls_available_ = false;
  bool tls_ = false;
};

class FakeHost : public SessionHost {
 public:
  BackendKey register_session(CancelToken& token, bool superuser) override {
    if (full) throw Error(SqlState::too_many_connections, "sorry, too many clients already", Severity::fatal);
    last_superuser = superuser;
    ++registered;
    tokens.push_back(&token);
    return BackendKey{next_pid++, 0x5eC12e7};
  }
  void unregister_session(const BackendKey&) override { ++unregistered; }
  void cancel(const BackendKey& key) override { cancels.push_back(key); }

  int32_t next_pid = 4242;
  int registered = 0;
  int unregistered = 0;
  std::vector<CancelToken*> tokens;
  std::vector<BackendKey> cancels;
  bool full = false;  // every registration is refused with 53300
  bool last_superuser = false;
};

}  // namespace tally::protocol::testing
