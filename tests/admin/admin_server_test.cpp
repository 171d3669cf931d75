// The Beast admin endpoint over real sockets: routes, keep-alive, HEAD, bad
// requests, tokens, and metrics that move between scrapes.
#include "server/admin_server.hpp"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "tests/admin/http_client.hpp"
#include "tests/admin/prometheus_text.hpp"
#include "tests/admin/sample_tuning.hpp"

namespace tally::server {
namespace {

using testing_admin::http_get;
using testing_admin::HttpClient;

TEST(AdminServer, ServesEveryRoute) {
  metrics::Registry registry;
  metrics::Counter& queries = registry.counter("t_queries_total", "x");
  std::atomic<bool> ready{false};
  AdminServer server("127.0.0.1", 0, "",
                     {.ready = [&] { return ReadyState{ready.load(), "engines starting"}; },
                      .tuning_json = [] { return testing_admin::sample_tuning().dump(); },
                      .registry = &registry});
  server.start();
  ASSERT_TRUE(server.running());
  ASSERT_NE(server.port(), 0);

  EXPECT_EQ(http_get(server.port(), "/health").status, 200);
  EXPECT_EQ(http_get(server.port(), "/ready").status, 503);
  ready = true;
  EXPECT_EQ(http_get(server.port(), "/ready").status, 200);
  EXPECT_EQ(http_get(server.port(), "/missing").status, 404);

  auto first = testing_prom::parse_exposition(http_get(server.port(), "/metrics").body);
  queries.inc(5);
  auto second = testing_prom::parse_exposition(http_get(server.port(), "/metrics").body);
  EXPECT_EQ(second.at("t_queries_total") - first.at("t_queries_total"), 5);

  auto tuning = http_get(server.port(), "/tuning");
  EXPECT_EQ(tuning.status, 200);
  EXPECT_EQ(nlohmann::json::parse(tuning.body)["entries"].size(), testing_admin::sample_entries().size());
  auto page = http_get(server.port(), "/tuning/page");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("id=\"tuning-data\""), std::string::npos);
  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_THROW(http_get(server.port(), "/health"), boost::system::system_error);
}

TEST(AdminServer, KeepAliveHeadAndBadRequests) {
  metrics::Registry registry;
  AdminServer server("127.0.0.1", 0, "", {.registry = &registry});
  server.start();
  HttpClient client("127.0.0.1", server.port());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client.request("GET", "/health").status, 200);
  auto head = client.request("HEAD", "/health");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(head.content_length, std::to_string(std::string("{\"status\":\"up\"}\n").size()));
  EXPECT_EQ(client.request("DELETE", "/metrics").status, 405);

  HttpClient garbage("127.0.0.1", server.port());
  std::string reply = garbage.raw("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;

  HttpClient huge("127.0.0.1", server.port());
  std::string big_header = "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n";
  std::string big_reply = huge.raw(big_header);
  // Refused with 400, or the connection is reset before the client reads it.
  EXPECT_TRUE(big_reply.empty() || big_reply.rfind("HTTP/1.1 400", 0) == 0) << big_reply.substr(0, 100);
  EXPECT_EQ(big_reply.find("200 OK"), std::string::npos);
  // The server still serves after bad clients.
  EXPECT_EQ(http_get(server.port(), "/health").status, 200);
}

TEST(AdminServer, TokenOverTheWire) {
  metrics::Registry registry;
  AdminServer server("127.0.0.1", 0, "tok", {.registry = &registry});
  server.start();
  EXPECT_EQ(http_get(server.port(), "/metrics").status, 401);
  EXPECT_EQ(http_get(server.port(), "/metrics", "Bearer tok").status, 200);
  EXPECT_EQ(http_get(server.port(), "/tuning/page?token=tok").status, 200);
  EXPECT_EQ(http_get(server.port(), "/health").status, 200);
}

TEST(AdminServer, PortInUseIsAClearError) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor taken(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  uint16_t port = taken.local_endpoint().port();
  config::Config config;
  config.http_port = port;
  AdminServer server(config, {});
  try {
    server.start();
    FAIL() << "bound a port in use";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << what;
    EXPECT_NE(what.find("http_port"), std::string::npos) << what;
    EXPECT_NE(what.find("in use"), std::string::npos) << what;
  }
  EXPECT_FALSE(server.running());
}

TEST(AdminServer, ManyConcurrentClients) {
  metrics::Registry registry;
  metrics::Counter& c = registry.counter("t_total", "x");
  AdminServer server("127.0.0.1", 0, "", {.registry = &registry});
  server.start();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      HttpClient client("127.0.0.1", server.port());
      for (int i = 0; i < 25; ++i) {
        c.inc();
        if (client.request("GET", "/metrics").status == 200) ++ok;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ(testing_prom::parse_exposition(http_get(server.port(), "/metrics").body).at("t_total"), 200);
}

}  // namespace
}  // namespace tally::server
