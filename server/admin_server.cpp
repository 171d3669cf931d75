#include "server/admin_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "common/log.hpp"
#include "common/thread_name.hpp"

namespace tally::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A request of the admin API is a GET line and a few headers.
constexpr size_t max_header_bytes = 16 * 1024;
constexpr size_t max_body_bytes = 4 * 1024;
// Idle or slow clients are dropped after this long per request.
constexpr auto request_timeout = std::chrono::seconds(15);

// One connection. Beast's asynchronous operations keep their session alive
// through the handler, which is why this (unlike most of Tally) is shared_ptr.
class AdminConnection : public std::enable_shared_from_this<AdminConnection> {
 public:
  AdminConnection(tcp::socket socket, const AdminRouter& router)
      : stream_(std::move(socket)), router_(router) {}

  void run() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(max_header_bytes);
    parser_->body_limit(max_body_bytes);
    stream_.expires_after(request_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return close();
    if (ec) {
      if (ec != beast::error::timeout && ec != asio::error::operation_aborted &&
          ec != asio::error::connection_reset)
        respond_plain(http::status::bad_request, false);
      return;
    }
    const auto& req = parser_->get();
    AdminRequest request{std::string(req.method_string()), std::string(req.target()),
                         std::string(req[http::field::authorization])};
    AdminResponse response = router_.handle(request);
    log::debug("admin_request", {{"method", request.method},
                                 {"path", request.target.substr(0, request.target.find('?'))},
                                 {"status", response.status}});

    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), req.version());
    res->set(http::field::server, "tally-admin");
    res->set(http::field::content_type, response.content_type);
    res->set(http::field::cache_control, "no-store");
    for (auto& [name, value] : response.headers) res->set(name, value);
    res->keep_alive(req.keep_alive());
    res->body() = std::move(response.body);
    res->prepare_payload();  // Content-Length of the full body, also for HEAD
    if (req.method() == http::verb::head) res->body().clear();
    write(std::move(res));
  }

  void respond_plain(http::status status, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(status, 11);
    res->set(http::field::content_type, "application/json");
    res->body() = "{\"error\":\"bad request\"}\n";
    res->keep_alive(keep_alive);
    res->prepare_payload();
    write(std::move(res));
  }

  void write(std::shared_ptr<http::response<http::string_body>> res) {
    bool keep_alive = res->keep_alive();
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
                        if (ec) return;
                        if (keep_alive) self->read();
                        else self->close();
                      });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const AdminRouter& router_;
};

}  // namespace

struct AdminServer::Impl {
  Impl(std::string address, uint16_t port, std::string token, AdminCallbacks callbacks)
      : address(std::move(address)), requested_port(port), router(std::move(token), std::move(callbacks)) {}

  void accept() {
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) std::make_shared<AdminConnection>(std::move(socket), router)->run();
      accept();
    });
  }

  std::string address;
  uint16_t requested_port;
  AdminRouter router;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::atomic<bool> running{false};
  uint16_t bound_port = 0;
};

AdminServer::AdminServer(const config::Config& config, AdminCallbacks callbacks)
    : AdminServer(config.http_address, config.http_port, config.http_token, std::move(callbacks)) {}

AdminServer::AdminServer(std::string address, uint16_t port, std::string token,
                         AdminCallbacks callbacks)
    : impl_(std::make_unique<Impl>(std::move(address), port, std::move(token), std::move(callbacks))) {}

AdminServer::~AdminServer() { stop(); }

void AdminServer::start() {
  if (impl_->running) return;
  std::string where = impl_->address + ":" + std::to_string(impl_->requested_port);
  try {
    tcp::endpoint endpoint(asio::ip::make_address(impl_->address), impl_->requested_port);
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& e) {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    throw std::runtime_error("admin endpoint " + where + " (http_port): " + e.code().message());
  }
  impl_->bound_port = impl_->acceptor.local_endpoint().port();
  impl_->accept();
  impl_->running = true;
  impl_->thread = std::thread([impl = impl_.get()] {
    name_this_thread("tally-admin");
    try {
      impl->io.run();
    } catch (const std::exception& e) {
      log::error("admin_endpoint_failed", {{"error", e.what()}});
    }
  });
  log::info("admin_endpoint_listening",
            {{"address", impl_->address}, {"port", impl_->bound_port},
             {"token_required", impl_->router.requires_token()}});
}

void AdminServer::stop() {
  if (!impl_ || !impl_->running.exchange(false)) return;
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ec;
    impl->acceptor.close(ec);
    impl->io.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

bool AdminServer::running() const { return impl_->running; }
uint16_t AdminServer::port() const { return impl_->bound_port; }
AdminRouter& AdminServer::router() { return impl_->router; }

}  // namespace tally::server
