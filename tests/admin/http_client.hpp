#pragma once
// A minimal synchronous HTTP/1.1 client (Boost.Beast) for admin tests.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <string>

namespace tally::testing_admin {

struct HttpResult {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string content_length;
};

class HttpClient {
 public:
  HttpClient(const std::string& host, uint16_t port) : stream_(io_) {
    namespace asio = boost::asio;
    stream_.expires_after(std::chrono::seconds(10));
    stream_.connect(asio::ip::tcp::endpoint(asio::ip::make_address(host), port));
  }
  HttpResult request(const std::string& method, const std::string& target,
                     const std::string& authorization = "", bool keep_alive = true) {
    namespace http = boost::beast::http;
    http::request<http::empty_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "localhost");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    req.keep_alive(keep_alive);
    stream_.expires_after(std::chrono::seconds(10));
    http::write(stream_, req);
    http::response_parser<http::string_body> parser;
    parser.skip(method == "HEAD");  // a HEAD response has headers only
    http::read(stream_, buffer_, parser);
    auto& res = parser.get();
    return {static_cast<int>(res.result_int()), res.body(), std::string(res[http::field::content_type]),
            std::string(res[http::field::content_length])};
  }
  // Sends raw bytes and returns whatever comes back until the server closes.
  std::string raw(const std::string& bytes) {
    boost::beast::error_code ec;
    // The server may answer and close before reading everything (EPIPE here).
    boost::asio::write(stream_.socket(), boost::asio::buffer(bytes), ec);
    std::string out;
    char buf[4096];
    while (true) {
      size_t n = stream_.socket().read_some(boost::asio::buffer(buf), ec);
      if (ec) break;
      out.append(buf, n);
    }
    return out;
  }

 private:
  boost::asio::io_context io_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
};

inline HttpResult http_get(uint16_t port, const std::string& target, const std::string& auth = "") {
  HttpClient client("127.0.0.1", port);
  return client.request("GET", target, auth, false);
}

}  // namespace tally::testing_admin
