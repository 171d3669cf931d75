#pragma once
// A minimal blocking v3 client over a real socket (plain or TLS), built on
// the project's own codec, for server tests that need control no driver
// gives: CancelRequest with a chosen key, half-sent packets, raw bytes.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/backend_messages.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_buffer.hpp"

namespace tally::protocol::testing {

class WireClient {
 public:
  explicit WireClient(uint16_t port) : socket_(io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    socket_.set_option(boost::asio::ip::tcp::no_delay(true));
  }

  // Sends SSLRequest; on 'S' performs the TLS handshake. Returns the answer byte.
  char request_tls(boost::asio::ssl::context& context) {
    send(frontend::encode_startup_packet(frontend::SslRequest{}));
    char answer = 0;
    boost::asio::read(socket_, boost::asio::buffer(&answer, 1));
    if (answer == 'S') {
      tls_ = std::make_unique<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>>(socket_,
                                                                                     context);
      tls_->handshake(boost::asio::ssl::stream_base::client);
    }
    return answer;
  }

  void send(std::string_view bytes) {
    if (tls_) {
      boost::asio::write(*tls_, boost::asio::buffer(bytes.data(), bytes.size()));
    } else {
      boost::asio::write(socket_, boost::asio::buffer(bytes.data(), bytes.size()));
    }
  }

  void startup(const std::string& user = "tally", const std::string& database = "tally") {
    frontend::StartupMessage m;
    m.parameters = {{"user", user}, {"database", database}};
    send(frontend::encode_startup_packet(m));
  }

  // The next message, or nullopt when the server closed the connection.
  std::optional<backend::Message> read() {
    char header[5];
    if (!read_exact(header, 5)) return std::nullopt;
    MessageReader in(std::string_view(header + 1, 4));
    int32_t length = in.int32();
    std::string body(static_cast<size_t>(length) - 4, '\0');
    if (!read_exact(body.data(), body.size())) return std::nullopt;
    return backend::decode(header[0], body);
  }

  // Messages up to and including ReadyForQuery, or up to the close.
  std::vector<backend::Message> read_until_ready() {
    std::vector<backend::Message> messages;
    while (auto m = read()) {
      messages.push_back(*m);
      if (std::holds_alternative<backend::ReadyForQuery>(*m)) break;
    }
    return messages;
  }

  // Bytes the server has sent that were not read yet (plain connections).
  size_t available() { return socket_.available(); }
  void close() {
    boost::system::error_code ec;
    socket_.close(ec);
  }

  backend::BackendKeyData key(const std::vector<backend::Message>& startup) {
    for (const auto& m : startup) {
      if (auto* k = std::get_if<backend::BackendKeyData>(&m)) return *k;
    }
    throw std::runtime_error("no BackendKeyData");
  }

 private:
  bool read_exact(char* data, size_t size) {
    boost::system::error_code ec;
    if (tls_) {
      boost::asio::read(*tls_, boost::asio::buffer(data, size), ec);
    } else {
      boost::asio::read(socket_, boost::asio::buffer(data, size), ec);
    }
    return !ec;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
};

inline std::string first_error_code(const std::vector<backend::Message>& messages) {
  for (const auto& m : messages) {
    if (auto* e = std::get_if<backend::ErrorResponse>(&m)) return e->field('C');
  }
  return "";
}

}  // namespace tally::protocol::testing
