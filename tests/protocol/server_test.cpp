// The server over real sockets with the framing-only fake handler: TLS after
// SSLRequest, CancelRequest reaching exactly one session, the connection
// limit, stalled and vanishing clients, and graceful shutdown.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "server/metrics.hpp"
#include "server/server.hpp"
#include "tests/common/eventually.hpp"
#include "tests/protocol/fake_handler.hpp"
#include "tests/protocol/tls_certificate_fixture.hpp"
#include "tests/protocol/wire_client.hpp"

namespace tally::server {
namespace {

using protocol::testing::FakeFactory;
using protocol::testing::first_error_code;
using protocol::testing::WireClient;
namespace fe = protocol::frontend;
namespace be = protocol::backend;
using namespace std::chrono_literals;

config::Config test_config() {
  config::Config config;
  config.port = 0;  // any free port
  return config;
}

bool has_ready(const std::vector<be::Message>& messages) {
  return !messages.empty() && std::holds_alternative<be::ReadyForQuery>(messages.back());
}

using testing::eventually;

// A server over the fake handler, started on a free port; stopped (if a test
// did not stop it itself) when it goes out of scope.
struct RunningServer {
  explicit RunningServer(const config::Config& config = test_config()) : server(config, factory) { server.start(); }
  ~RunningServer() { server.stop(1s); }
  uint16_t port() const { return server.port(); }
  FakeFactory factory;  // before the server, which refers to it
  Server server;
};

// Startup on a connection; true when the session reached ReadyForQuery.
bool start_session(WireClient& client) {
  client.startup();
  return has_ready(client.read_until_ready());
}

// The names of this process's threads (/proc/self/task/*/comm).
std::multiset<std::string> thread_names() {
  std::multiset<std::string> names;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.insert(name);
  }
  return names;
}

TEST(Server, ThreadsCarryTheirRoleAsName) {
  RunningServer running;
  // Each thread names itself first thing, which may come after start().
  const auto named = [](const char* name, size_t n) {
    return eventually([&] { return thread_names().count(name) == n; }, 2s);
  };
  EXPECT_TRUE(named("tally-accept", 1));
  EXPECT_TRUE(named("tally-watchdog", 1));
  WireClient first(running.port()), second(running.port());
  ASSERT_TRUE(start_session(first));
  ASSERT_TRUE(start_session(second));
  EXPECT_TRUE(named("tally-session", 2));  // one per connection
}

TEST(Server, StartupAndQuery) {
  RunningServer running;
  Server& server = running.server;
  ASSERT_NE(server.port(), 0);
  uint64_t ok_before = metrics::queries_total(metrics::QueryOutcome::ok).value();
  uint64_t failed_before = metrics::queries_total(metrics::QueryOutcome::error).value();
  WireClient client(server.port());
  ASSERT_TRUE(start_session(client));
  EXPECT_EQ(metrics::connections_active().value(), 1);
  client.send(fe::encode(fe::Query{"rows 2"}));
  auto result = client.read_until_ready();
  ASSERT_EQ(result.size(), 5u);
  EXPECT_EQ(std::get<be::CommandComplete>(result[3]).tag, "SELECT 2");
  client.send(fe::encode(fe::Query{"fail"}));
  EXPECT_EQ(first_error_code(client.read_until_ready()), "42601");
  EXPECT_EQ(metrics::queries_total(metrics::QueryOutcome::ok).value(), ok_before + 1);
  EXPECT_EQ(metrics::queries_total(metrics::QueryOutcome::error).value(), failed_before + 1);
}

TEST(Server, CancelRequestCancelsExactlyThatSession) {
  RunningServer running;
  Server& server = running.server;
  WireClient a(server.port()), b(server.port());
  a.startup();
  auto key = a.key(a.read_until_ready());
  ASSERT_TRUE(start_session(b));
  a.send(fe::encode(fe::Query{"wait"}));
  std::this_thread::sleep_for(100ms);

  // A wrong secret is ignored.
  {
    WireClient canceller(server.port());
    canceller.send(fe::encode_startup_packet(fe::CancelRequest{key.process_id, key.secret_key + 1}));
    EXPECT_FALSE(canceller.read().has_value());  // closed without an answer
  }
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(a.available(), 0u);

  auto started = std::chrono::steady_clock::now();
  {
    WireClient canceller(server.port());
    canceller.send(fe::encode_startup_packet(fe::CancelRequest{key.process_id, key.secret_key}));
    EXPECT_FALSE(canceller.read().has_value());
  }
  auto result = a.read_until_ready();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_EQ(first_error_code(result), "57014");
  EXPECT_TRUE(has_ready(result));
  // The session goes on, and the other one was never touched.
  a.send(fe::encode(fe::Query{"rows 1"}));
  EXPECT_EQ(first_error_code(a.read_until_ready()), "");
  b.send(fe::encode(fe::Query{"rows 1"}));
  auto other = b.read_until_ready();
  EXPECT_TRUE(has_ready(other));
  EXPECT_EQ(first_error_code(other), "");
}

TEST(Server, StatementTimeoutCancelsWith57014) {
  config::Config config = test_config();
  config.statement_timeout_ms = 300;
  RunningServer running(config);
  Server& server = running.server;
  WireClient client(server.port());
  ASSERT_TRUE(start_session(client));
  auto started = std::chrono::steady_clock::now();
  client.send(fe::encode(fe::Query{"wait"}));
  auto result = client.read_until_ready();
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(first_error_code(result), "57014");
  for (const auto& m : result) {
    if (auto* e = std::get_if<be::ErrorResponse>(&m)) {
      EXPECT_EQ(e->field('M'), "canceling statement due to statement timeout");
    }
  }
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 5s);
  // Quick statements are not affected, and the timer was disarmed after each.
  for (int i = 0; i < 3; ++i) {
    client.send(fe::encode(fe::Query{"rows 1"}));
    EXPECT_EQ(first_error_code(client.read_until_ready()), "");
  }
  std::this_thread::sleep_for(400ms);
  client.send(fe::encode(fe::Query{"rows 1"}));
  EXPECT_EQ(first_error_code(client.read_until_ready()), "");
}

TEST(Server, ConnectionLimitAnswers53300) {
  config::Config config = test_config();
  config.max_connections = 2;
  RunningServer running(config);
  Server& server = running.server;
  auto first = std::make_unique<WireClient>(server.port());
  ASSERT_TRUE(start_session(*first));
  WireClient second(server.port());
  ASSERT_TRUE(start_session(second));
  uint64_t refused_before = metrics::connections_refused_total().value();
  {
    WireClient third(server.port());
    third.startup();
    auto refused = third.read_until_ready();
    EXPECT_EQ(first_error_code(refused), "53300");
    EXPECT_FALSE(third.read().has_value());
  }
  EXPECT_EQ(metrics::connections_refused_total().value(), refused_before + 1);
  // A slot frees when a session ends.
  first->send(fe::encode(fe::Terminate{}));
  first.reset();
  EXPECT_TRUE(eventually([&] {
    WireClient again(server.port());
    return start_session(again);
  }));
}

TEST(Server, ConnectionsNotYetAuthenticatedTakeNoSlot) {
  config::Config config = test_config();
  config.max_connections = 2;
  RunningServer running(config);
  Server& server = running.server;
  std::vector<std::unique_ptr<WireClient>> silent;
  for (int i = 0; i < 10; ++i) silent.push_back(std::make_unique<WireClient>(server.port()));
  WireClient first(server.port());
  ASSERT_TRUE(start_session(first));
  WireClient second(server.port());
  ASSERT_TRUE(start_session(second));
  // Silent sockets hold no session thread either.
  EXPECT_LE(thread_names().count("tally-session"), 2u);
}

TEST(Server, ReservedSlotsAreForSuperusers) {
  config::Config config = test_config();
  config.max_connections = 2;
  config.superuser_reserved_connections = 1;
  config.users.push_back(config::UserConfig{"plain", config::AuthMethod::trust, "", ""});
  RunningServer running(config);
  Server& server = running.server;
  WireClient plain(server.port());
  plain.startup("plain");
  ASSERT_TRUE(has_ready(plain.read_until_ready()));
  WireClient refused(server.port());
  refused.startup("plain");
  EXPECT_EQ(first_error_code(refused.read_until_ready()), "53300");
  WireClient super(server.port());
  ASSERT_TRUE(start_session(super));  // "tally" is a superuser by default
}

TEST(Server, StalledClientDoesNotBlockOthers) {
  RunningServer running;
  Server& server = running.server;
  WireClient stalled(server.port());
  stalled.send(std::string("\0\0\0", 3));  // a third of a length word, then nothing
  WireClient idle_mid_message(server.port());
  ASSERT_TRUE(start_session(idle_mid_message));
  idle_mid_message.send(std::string("Q\0\0\0\x20SEL", 8));  // half a message
  for (int i = 0; i < 3; ++i) {
    WireClient client(server.port());
    ASSERT_TRUE(start_session(client));
    client.send(fe::encode(fe::Query{"rows 3"}));
    EXPECT_TRUE(has_ready(client.read_until_ready()));
  }
  server.stop(200ms);
}

TEST(Server, VanishingClientReleasesItsSession) {
  RunningServer running;
  Server& server = running.server;
  {
    WireClient client(server.port());
    ASSERT_TRUE(start_session(client));
    EXPECT_EQ(server.sessions(), 1u);
    // A result far larger than the socket buffers, and nobody reading it.
    client.send(fe::encode(fe::Query{"rows 3000000"}));
    std::this_thread::sleep_for(50ms);
    client.close();
  }
  EXPECT_TRUE(eventually([&] { return server.sessions() == 0 && server.connections() == 0; }, 30s));
}

TEST(Server, ClientVanishingDuringASilentStatementCancelsIt) {
  RunningServer running;
  Server& server = running.server;
  auto started = std::chrono::steady_clock::now();
  {
    WireClient client(server.port());
    ASSERT_TRUE(start_session(client));
    client.send(fe::encode(fe::Query{"wait"}));  // writes nothing for up to 20 s
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(eventually([&] { return server.sessions() == 0; }, 15s));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(Server, GracefulStopEndsSessionsWith57P01) {
  RunningServer running;
  Server& server = running.server;
  WireClient idle(server.port()), busy(server.port());
  ASSERT_TRUE(start_session(idle));
  ASSERT_TRUE(start_session(busy));
  busy.send(fe::encode(fe::Query{"wait"}));
  std::this_thread::sleep_for(100ms);
  auto started = std::chrono::steady_clock::now();
  std::thread stopper([&] { server.stop(300ms); });
  auto idle_end = idle.read_until_ready();
  auto busy_end = busy.read_until_ready();
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  ASSERT_EQ(idle_end.size(), 1u);
  EXPECT_EQ(std::get<be::ErrorResponse>(idle_end[0]).field('C'), "57P01");
  EXPECT_EQ(std::get<be::ErrorResponse>(idle_end[0]).field('V'), "FATAL");
  EXPECT_EQ(first_error_code(busy_end), "57P01");
  EXPECT_FALSE(idle.read().has_value());
  EXPECT_THROW(WireClient{server.port()}, boost::system::system_error);
}

class TlsServer : public tally::testing::TlsCertificateTest {};

TEST_F(TlsServer, SslRequestUpgradesToTls) {
  config::Config config = test_config();
  config.tls_cert_file = (dir_ / "cert.pem").string();
  config.tls_key_file = (dir_ / "key.pem").string();
  RunningServer running(config);
  Server& server = running.server;
  boost::asio::ssl::context context(boost::asio::ssl::context::tls_client);
  context.load_verify_file(config.tls_cert_file);
  context.set_verify_mode(boost::asio::ssl::verify_peer);
  WireClient client(server.port());
  ASSERT_EQ(client.request_tls(context), 'S');
  ASSERT_TRUE(start_session(client));
  client.send(fe::encode(fe::Query{"rows 1000"}));
  auto result = client.read_until_ready();
  EXPECT_EQ(result.size(), 1003u);
}

TEST_F(TlsServer, WithoutCertificateSslRequestGetsN) {
  RunningServer running;
  Server& server = running.server;
  boost::asio::ssl::context context(boost::asio::ssl::context::tls_client);
  WireClient client(server.port());
  EXPECT_EQ(client.request_tls(context), 'N');
  EXPECT_TRUE(start_session(client));
}

TEST_F(TlsServer, MissingCertificateFileIsAClearStartupError) {
  config::Config config = test_config();
  config.tls_cert_file = (dir_ / "absent.pem").string();
  config.tls_key_file = (dir_ / "key.pem").string();
  FakeFactory factory;
  try {
    Server server(config, factory);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("absent.pem"), std::string::npos);
  }
}

}  // namespace
}  // namespace tally::server
