// Scripted exchanges driving protocol::ProtocolSession over a ScriptedStream: startup,
// every authentication method, simple and extended query, COPY, errors and
// the FATAL paths, checked message by message.
#include <gtest/gtest.h>

#include <thread>

#include "protocol/backend_messages.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_buffer.hpp"
#include "protocol/scram.hpp"
#include "protocol/protocol_session.hpp"
#include "tests/protocol/client_script.hpp"
#include "tests/protocol/fake_handler.hpp"
#include "tests/protocol/scripted_stream.hpp"

namespace tally::protocol {
namespace {

using testing::FakeFactory;
using testing::FakeHost;
using testing::ScriptedStream;
namespace fe = frontend;
namespace be = backend;

std::string startup(const std::string& user = "tally", const std::string& database = "tally") {
  return testing::startup_packet(user, database, "test");
}

constexpr auto msgs = testing::encode_messages;

// One letter per backend message, e.g. "RSSKZ".
std::string types(std::string_view output) {
  std::string t;
  MessageReader in(output);
  while (in.remaining() > 0) {
    t.push_back(static_cast<char>(in.byte()));
    int32_t length = in.int32();
    in.bytes(static_cast<size_t>(length) - 4);
  }
  return t;
}

std::vector<std::string> error_codes(std::string_view output) {
  std::vector<std::string> codes;
  for (const auto& m : be::decode_all(output)) {
    if (auto* e = std::get_if<be::ErrorResponse>(&m)) codes.push_back(e->field('C'));
  }
  return codes;
}

std::string error_severity(std::string_view output) {
  for (const auto& m : be::decode_all(output)) {
    if (auto* e = std::get_if<be::ErrorResponse>(&m)) return e->field('V');
  }
  return "";
}

struct Harness {
  config::Config config;
  FakeFactory factory;
  FakeHost host;

  // Runs a whole session over the script; returns what the server wrote.
  std::string run(std::string input, size_t max_chunk = 1 << 20, bool loopback = true) {
    ScriptedStream stream(std::move(input), max_chunk);
    stream.set_loopback(loopback);
    ProtocolSession session(config, factory, host, stream);
    session.run();
    EXPECT_EQ(session.state(), ProtocolSession::State::closed);
    return stream.output;
  }
};

// What a successful trust startup produces: AuthenticationOk, two
// ParameterStatus from the handler, BackendKeyData, ReadyForQuery.
constexpr std::string_view kStartupTypes = "RSSKZ";

TEST(SessionStartup, TrustOnLoopback) {
  Harness h;
  std::string out = h.run(startup() + msgs({fe::Terminate{}}));
  EXPECT_EQ(types(out), kStartupTypes);
  auto messages = be::decode_all(out);
  EXPECT_EQ(std::get<be::Authentication>(messages[0]).code, be::AuthCode::ok);
  EXPECT_EQ(std::get<be::BackendKeyData>(messages[3]).process_id, 4242);
  EXPECT_EQ(std::get<be::ReadyForQuery>(messages[4]).status, TransactionStatus::idle);
  EXPECT_EQ(h.host.registered, 1);
  EXPECT_EQ(h.host.unregistered, 1);
}

TEST(SessionStartup, TrustRefusedForRemotePeer) {
  Harness h;
  std::string out = h.run(startup(), 1 << 20, /*loopback=*/false);
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"28000"});
  EXPECT_EQ(error_severity(out), "FATAL");
  EXPECT_EQ(h.factory.created, 0);
}

TEST(SessionStartup, UnknownUserAndDatabase) {
  Harness h;
  EXPECT_EQ(error_codes(h.run(startup("nobody"))), std::vector<std::string>{"28000"});
  std::string out = h.run(startup("tally", "elsewhere"));
  EXPECT_EQ(types(out), "RE");  // like PostgreSQL: after AuthenticationOk
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"3D000"});
  // The factory's own refusal is FATAL too.
  h.config.databases.push_back("broken");
  EXPECT_EQ(error_codes(h.run(startup("tally", "broken"))), std::vector<std::string>{"3D000"});
}

TEST(SessionStartup, MissingUserAndBadVersion) {
  Harness h;
  fe::StartupMessage no_user;
  no_user.parameters = {{"database", "tally"}};
  EXPECT_EQ(error_codes(h.run(fe::encode_startup_packet(no_user))),
            std::vector<std::string>{"28000"});
  fe::StartupMessage v2;
  v2.version = 2 << 16;
  EXPECT_EQ(error_codes(h.run(fe::encode_startup_packet(v2))),
            std::vector<std::string>{"0A000"});
}

TEST(SessionStartup, NegotiatesMinorVersionAndUnknownOptions) {
  Harness h;
  fe::StartupMessage m;
  m.version = (3 << 16) | 2;
  m.parameters = {{"user", "tally"}, {"_pq_.compression", "on"}};
  std::string out = h.run(fe::encode_startup_packet(m) + msgs({fe::Terminate{}}));
  ASSERT_EQ(types(out), "v" + std::string(kStartupTypes));
  auto v = std::get<be::NegotiateProtocolVersion>(be::decode_all(out)[0]);
  EXPECT_EQ(v.newest_minor, 0);
  EXPECT_EQ(v.unrecognized_options, std::vector<std::string>{"_pq_.compression"});
}

TEST(SessionStartup, TooManyConnections) {
  Harness h;
  h.host.full = true;
  EXPECT_EQ(error_codes(h.run(startup())), std::vector<std::string>{"53300"});
}

TEST(SessionStartup, SslAndGssRequestsWithoutTls) {
  Harness h;
  std::string out = h.run(fe::encode_startup_packet(fe::GssEncRequest{}) +
                          fe::encode_startup_packet(fe::SslRequest{}) + startup() +
                          msgs({fe::Terminate{}}));
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out.substr(0, 2), "NN");
  EXPECT_EQ(types(out.substr(2)), kStartupTypes);
}

TEST(SessionStartup, SslRequestWithTlsAndUnencryptedDataAfterIt) {
  Harness h;
  {
    ScriptedStream stream(fe::encode_startup_packet(fe::SslRequest{}), 1 << 20);
    // The startup packet arrives only after the handshake.
    stream.set_responder([sent = false](const std::string&) mutable {
      if (sent) return std::string();
      sent = true;
      return startup() + msgs({fe::Terminate{}});
    });
    stream.set_tls_available(true);
    ProtocolSession session(h.config, h.factory, h.host, stream);
    session.run();
    EXPECT_TRUE(stream.is_tls());
    EXPECT_EQ(stream.output[0], 'S');
    EXPECT_EQ(types(stream.output.substr(1)), kStartupTypes);
  }
  {
    // Bytes pipelined behind SSLRequest were sent in the clear: refused.
    ScriptedStream stream(fe::encode_startup_packet(fe::SslRequest{}) + startup(), 1 << 20);
    stream.set_tls_available(true);
    ProtocolSession session(h.config, h.factory, h.host, stream);
    session.run();
    EXPECT_FALSE(stream.is_tls());
    EXPECT_EQ(error_codes(stream.output.substr(1)), std::vector<std::string>{"08P01"});
  }
}

TEST(SessionStartup, CancelRequestReachesHostAndClosesSilently) {
  Harness h;
  std::string out = h.run(fe::encode_startup_packet(fe::CancelRequest{4242, 99}));
  EXPECT_EQ(out, "");
  ASSERT_EQ(h.host.cancels.size(), 1u);
  EXPECT_EQ(h.host.cancels[0], (BackendKey{4242, 99}));
  EXPECT_EQ(h.factory.created, 0);
}

TEST(SessionStartup, InvalidStartupLengthIsFatal) {
  Harness h;
  std::string bad;
  MessageWriter::put_int32(bad, 100000);
  EXPECT_EQ(error_codes(h.run(bad)), std::vector<std::string>{"08P01"});
  EXPECT_EQ(h.run(""), "");  // a port probe: no answer, no session
}

// --- Authentication -------------------------------------------------------

config::UserConfig user_with(config::AuthMethod method, std::string name = "alice",
                             std::string password = "pencil") {
  config::UserConfig user;
  user.name = name;
  user.method = method;
  user.scram_verifier = make_scram_verifier(password, 4096);
  user.md5_hash = md5_password_hash(password, name);
  return user;
}

// The body of the last message of type 'R' the server wrote.
be::Authentication last_auth(const std::string& output) {
  be::Authentication last;
  for (const auto& m : be::decode_all(output)) {
    if (auto* a = std::get_if<be::Authentication>(&m)) last = *a;
  }
  return last;
}

std::string run_with_responder(Harness& h, std::string input, ScriptedStream::Responder r) {
  ScriptedStream stream(std::move(input));
  stream.set_responder(std::move(r));
  ProtocolSession session(h.config, h.factory, h.host, stream);
  session.run();
  return stream.output;
}

std::string password_message(std::string_view password) {
  return fe::encode(fe::PasswordMessage{std::string(password) + std::string(1, '\0')});
}

TEST(SessionAuth, CleartextPassword) {
  Harness h;
  h.config.users = {user_with(config::AuthMethod::password)};
  std::string out = h.run(startup("alice") + password_message("pencil") + msgs({fe::Terminate{}}));
  EXPECT_EQ(types(out), "R" + std::string(kStartupTypes));
  out = h.run(startup("alice") + password_message("wrong"));
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"28P01"});
  EXPECT_EQ(h.factory.created, 1);
  // With only an MD5 hash stored, cleartext still verifies.
  h.config.users[0].scram_verifier.clear();
  out = h.run(startup("alice") + password_message("pencil") + msgs({fe::Terminate{}}));
  EXPECT_EQ(types(out), "R" + std::string(kStartupTypes));
}

TEST(SessionAuth, ClientHangsUpAtPasswordPrompt) {
  Harness h;
  h.config.users = {user_with(config::AuthMethod::password)};
  // psql does this to prompt for the password, then reconnects.
  std::string out = h.run(startup("alice"));
  EXPECT_EQ(types(out), "R");
  EXPECT_EQ(h.factory.created, 0);
}

TEST(SessionAuth, Md5) {
  for (std::string password : {"pencil", "wrong"}) {
    Harness h;
    h.config.users = {user_with(config::AuthMethod::md5)};
    int round = 0;
    std::string out = run_with_responder(h, startup("alice"), [&](const std::string& output) {
      if (round++ > 0) return std::string();
      be::Authentication request = last_auth(output);
      EXPECT_EQ(request.code, be::AuthCode::md5_password);
      return password_message(
          md5_salted_response(md5_password_hash(password, "alice"), request.data));
    });
    if (password == "pencil") {
      EXPECT_EQ(types(out), "R" + std::string(kStartupTypes));
    } else {
      EXPECT_EQ(error_codes(out), std::vector<std::string>{"28P01"});
    }
  }
}

std::string scram_session(Harness& h, std::string password, bool* server_verified,
                          const std::string& user = "alice", std::string* server_first = nullptr) {
  ScramClient client(password);
  int round = 0;
  return run_with_responder(h, startup(user), [&](const std::string& output) {
    be::Authentication request = last_auth(output);
    switch (round++) {
      case 0:
        EXPECT_EQ(request.code, be::AuthCode::sasl);
        EXPECT_EQ(request.data, std::string("SCRAM-SHA-256\0\0", 15));
        return fe::encode(fe::PasswordMessage{
            fe::encode_sasl_initial_response({"SCRAM-SHA-256", client.client_first()})});
      case 1:
        EXPECT_EQ(request.code, be::AuthCode::sasl_continue);
        if (server_first) *server_first = request.data;
        return fe::encode(fe::PasswordMessage{client.client_final(request.data)});
      case 2:
        *server_verified = request.code == be::AuthCode::ok;
        for (const auto& m : be::decode_all(output)) {
          auto* a = std::get_if<be::Authentication>(&m);
          if (a && a->code == be::AuthCode::sasl_final) {
            *server_verified = client.verify_server_final(a->data);
          }
        }
        return fe::encode(fe::Terminate{});
      default:
        return std::string();
    }
  });
}

TEST(SessionAuth, ScramSha256) {
  Harness h;
  h.config.users = {user_with(config::AuthMethod::scram_sha_256)};
  bool verified = false;
  std::string out = scram_session(h, "pencil", &verified);
  EXPECT_EQ(types(out), "RRR" + std::string(kStartupTypes));
  EXPECT_TRUE(verified);
  out = scram_session(h, "wrong", &verified);
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"28P01"});
  // md5 configured but only a SCRAM verifier stored: PostgreSQL runs SCRAM.
  h.config.users[0].method = config::AuthMethod::md5;
  h.config.users[0].md5_hash.clear();
  out = scram_session(h, "pencil", &verified);
  EXPECT_EQ(types(out), "RRR" + std::string(kStartupTypes));
}

std::string first_error_message(std::string_view output) {
  for (const auto& m : be::decode_all(output)) {
    if (auto* e = std::get_if<be::ErrorResponse>(&m)) return e->field('M');
  }
  return "";
}

// The salt of a server-first-message ("r=...,s=<salt>,i=...").
std::string scram_salt(const std::string& server_first) {
  size_t s = server_first.find(",s=");
  return server_first.substr(s + 3, server_first.find(",i=") - s - 3);
}

TEST(SessionAuth, UnknownUserGoesThroughTheSameScramExchange) {
  Harness h;
  h.config.users = {user_with(config::AuthMethod::scram_sha_256)};
  bool verified = false;
  std::string first, again;
  std::string out = scram_session(h, "pencil", &verified, "mallory", &first);
  // PostgreSQL 15's answer to an unknown role under scram-sha-256.
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"28P01"});
  EXPECT_EQ(first_error_message(out), "password authentication failed for user \"mallory\"");
  EXPECT_EQ(h.factory.created, 0);
  // The same salt each time, as for a real user.
  scram_session(h, "other", &verified, "mallory", &again);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(scram_salt(first), scram_salt(again));
  scram_session(h, "other", &verified, "trudy", &again);
  EXPECT_NE(scram_salt(first), scram_salt(again));
}

TEST(SessionAuth, UnknownUserGetsThePasswordPromptOfCleartextAndMd5) {
  for (auto method : {config::AuthMethod::password, config::AuthMethod::md5}) {
    Harness h;
    h.config.users = {user_with(method)};
    std::string out = h.run(startup("mallory") + password_message("pencil"));
    EXPECT_EQ(types(out), "RE");
    EXPECT_EQ(last_auth(out).code, method == config::AuthMethod::md5 ? be::AuthCode::md5_password
                                                                     : be::AuthCode::cleartext_password);
    EXPECT_EQ(error_codes(out), std::vector<std::string>{"28P01"});
    EXPECT_EQ(first_error_message(out), "password authentication failed for user \"mallory\"");
  }
}

TEST(SessionAuth, AuthenticationMessagesAreCappedAtTheLengthWord) {
  Harness h;
  h.config.users = {user_with(config::AuthMethod::password)};
  // A password message claiming 60 MB (below max_message_bytes), and nothing more:
  // refused at the header (PG_MAX_AUTH_TOKEN_LENGTH), not awaited.
  std::string header = "p";
  MessageWriter::put_int32(header, (60 << 20) + 4);
  std::string out = h.run(startup("alice") + header);
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"08P01"});
  // 65535 bytes are still read.
  out = h.run(startup("alice") + password_message(std::string(65534, 'x')));
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"28P01"});
}

TEST(SessionAuth, RegistrationSaysWhetherTheUserIsASuperuser) {
  Harness h;
  h.run(startup() + msgs({fe::Terminate{}}));
  EXPECT_TRUE(h.host.last_superuser);
  h.config.superusers = {};
  h.run(startup() + msgs({fe::Terminate{}}));
  EXPECT_FALSE(h.host.last_superuser);
}

TEST(SessionAuth, WrongMessageDuringAuthIsFatal) {
  Harness h;
  h.config.users = {user_with(config::AuthMethod::password)};
  std::string out = h.run(startup("alice") + msgs({fe::Query{"rows 1"}}));
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"08P01"});
  h.config.users = {user_with(config::AuthMethod::scram_sha_256)};
  out = h.run(startup("alice") +
              fe::encode(fe::PasswordMessage{fe::encode_sasl_initial_response({"PLAIN", "x"})}));
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"08P01"});
}

// --- Simple query ------------------------------------------------------------

std::string after_startup(const std::string& out) {
  EXPECT_EQ(types(out).substr(0, kStartupTypes.size()), kStartupTypes);
  MessageReader in(out);
  for (size_t i = 0; i < kStartupTypes.size(); ++i) {
    in.byte();
    in.bytes(static_cast<size_t>(in.int32()) - 4);
  }
  return std::string(in.rest());
}

TEST(SessionSimpleQuery, SeveralStatementsAndEmptyQuery) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Query{"rows 2; rows 0"}, fe::Query{"  "}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "TDDCTCZIZ");
  auto messages = be::decode_all(out);
  EXPECT_EQ(std::get<be::CommandComplete>(messages[3]).tag, "SELECT 2");
  EXPECT_EQ(std::get<be::DataRow>(messages[2]).values[0], "1");
}

TEST(SessionSimpleQuery, ErrorsAndTransactionStatus) {
  Harness h;
  std::string out = after_startup(h.run(startup() + msgs({fe::Query{"rows 1; fail; rows 1"},
                                                          fe::Query{"begin"}, fe::Query{"fail"},
                                                          fe::Query{"commit"}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "TDCEZCZEZCZ");
  auto messages = be::decode_all(out);
  EXPECT_EQ(std::get<be::ReadyForQuery>(messages[4]).status, TransactionStatus::idle);
  EXPECT_EQ(std::get<be::ReadyForQuery>(messages[6]).status, TransactionStatus::in_block);
  EXPECT_EQ(std::get<be::ReadyForQuery>(messages[8]).status, TransactionStatus::failed);
  EXPECT_EQ(std::get<be::CommandComplete>(messages[9]).tag, "ROLLBACK");
  EXPECT_EQ(std::get<be::ReadyForQuery>(messages[10]).status, TransactionStatus::idle);
}

TEST(SessionSimpleQuery, NoticeParameterStatusAndInternalErrors) {
  Harness h;
  std::string out = after_startup(
      h.run(startup() + msgs({fe::Query{"notice; setting"}, fe::Query{"crash"}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "NCSCZEZ");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"XX000"});
}

TEST(SessionSimpleQuery, FatalFromHandlerClosesConnection) {
  Harness h;
  std::string out =
      after_startup(h.run(startup() + msgs({fe::Query{"fatal"}, fe::Query{"rows 1"}})));
  EXPECT_EQ(types(out), "E");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"57P01"});
}

TEST(SessionSimpleQuery, ByteAtATimeGivesTheSameAnswer) {
  std::string script =
      startup() + msgs({fe::Query{"rows 3"}, fe::Query{""}, fe::Query{"fail"}, fe::Terminate{}});
  Harness a, b;
  std::string whole = a.run(script);
  std::string trickled = b.run(script, 1);
  // Only BackendKeyData's secret may differ; the fake host makes it fixed.
  EXPECT_EQ(types(whole), types(trickled));
  EXPECT_EQ(whole, trickled);
}

// --- Extended query ----------------------------------------------------------

TEST(SessionExtended, ParseBindDescribeExecuteSync) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Parse{"s", "echo $1", {23}}, fe::Describe{'S', "s"},
                        fe::Bind{"", "s", {0}, {std::string("42")}, {1}},
                        fe::Describe{'P', ""}, fe::Execute{"", 0}, fe::Sync{},
                        fe::Terminate{}})));
  EXPECT_EQ(types(out), "1tT2TDCZ");
  auto messages = be::decode_all(out);
  EXPECT_EQ(std::get<be::ParameterDescription>(messages[1]).types, std::vector<uint32_t>{23});
  EXPECT_EQ(std::get<be::RowDescription>(messages[2]).fields[0].format, Format::text);
  EXPECT_EQ(std::get<be::RowDescription>(messages[4]).fields[0].format, Format::binary);
  EXPECT_EQ(std::get<be::DataRow>(messages[5]).values[0], "42");
}

TEST(SessionExtended, RowLimitSuspendsAndResumes) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Parse{"", "rows 5", {}}, fe::Bind{"p", "", {}, {}, {}},
                        fe::Execute{"p", 2}, fe::Execute{"p", 2}, fe::Execute{"p", 2}, fe::Sync{},
                        fe::Execute{"p", 1}, fe::Sync{}, fe::Terminate{}})));
  // 2 rows + suspended, 2 rows + suspended, 1 row + complete; the portal is
  // gone after Sync ends the implicit transaction.
  EXPECT_EQ(types(out), "12DDsDDsDCZEZ");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"34000"});
}

TEST(SessionExtended, NoDataAndCloseAndNamedStatements) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Parse{"a", "nothing", {}}, fe::Describe{'S', "a"},
                        fe::Close{'S', "a"}, fe::Close{'S', "never"}, fe::Describe{'S', "a"},
                        fe::Sync{}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "1tn33EZ");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"26000"});
}

TEST(SessionExtended, DuplicateNamedStatementIs42P05) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Parse{"a", "rows 1", {}}, fe::Parse{"a", "rows 2", {}}, fe::Sync{},
                        fe::Parse{"", "rows 1", {}}, fe::Parse{"", "rows 2", {}}, fe::Sync{},
                        fe::Terminate{}})));
  EXPECT_EQ(types(out), "1EZ11Z");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"42P05"});
}

TEST(SessionExtended, ErrorSkipsUntilSync) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Parse{"", "fail parse", {}}, fe::Bind{"", "", {}, {}, {}},
                        fe::Execute{"", 0}, fe::Query{"rows 1"}, fe::Flush{}, fe::Sync{},
                        fe::Parse{"", "rows 1", {}}, fe::Bind{"", "", {}, {}, {}},
                        fe::Execute{"", 0}, fe::Sync{}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "EZ12DCZ");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"42601"});
  EXPECT_EQ(h.factory.created, 1);
}

TEST(SessionExtended, ExecuteErrorInTransactionBlock) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Query{"begin"}, fe::Parse{"", "fail", {}}, fe::Bind{"", "", {}, {}, {}},
                        fe::Execute{"", 0}, fe::Sync{}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "CZ12EZ");
  auto messages = be::decode_all(out);
  EXPECT_EQ(std::get<be::ReadyForQuery>(messages.back()).status, TransactionStatus::failed);
}

TEST(SessionExtended, BindChecksCountsAndFormats) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Parse{"s", "echo $1", {}}, fe::Bind{"", "s", {}, {}, {}}, fe::Sync{},
                        fe::Bind{"", "s", {0, 0}, {std::string("1")}, {}}, fe::Sync{},
                        fe::Bind{"", "s", {7}, {std::string("1")}, {}}, fe::Sync{},
                        fe::Bind{"", "s", {}, {std::string("1")}, {0, 1}}, fe::Sync{},
                        fe::Bind{"", "missing", {}, {}, {}}, fe::Sync{},
                        fe::Bind{"x", "s", {}, {std::string("1")}, {}},
                        fe::Bind{"x", "s", {}, {std::string("1")}, {}}, fe::Sync{},
                        fe::Terminate{}})));
  EXPECT_EQ(error_codes(out), (std::vector<std::string>{"08P01", "08P01", "22023", "08P01",
                                                        "26000", "42P03"}));
}

TEST(SessionExtended, InvalidDescribeAndCloseKinds) {
  Harness h;
  std::string out = after_startup(h.run(startup() + msgs({fe::Describe{'X', ""}, fe::Sync{},
                                                          fe::Close{'Y', ""}, fe::Sync{},
                                                          fe::Terminate{}})));
  EXPECT_EQ(types(out), "EZEZ");
  EXPECT_EQ(error_codes(out), (std::vector<std::string>{"08P01", "08P01"}));
}

// --- COPY ------------------------------------------------------------------------

TEST(SessionCopy, CopyInDataDoneAndFail) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Query{"copy in"}, fe::CopyData{"1\t2\n"}, fe::Flush{},
                        fe::CopyData{"3\t4\n"}, fe::CopyDone{}, fe::Query{"copy in"},
                        fe::CopyData{"x"}, fe::CopyFail{"gave up"}, fe::CopyData{"late"},
                        fe::CopyDone{}, fe::Query{"rows 0"}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "GCZGEZTCZ");
  auto messages = be::decode_all(out);
  EXPECT_EQ(std::get<be::CopyInResponse>(messages[0]).column_formats.size(), 2u);
  EXPECT_EQ(std::get<be::CommandComplete>(messages[1]).tag, "COPY 8");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"57014"});
}

TEST(SessionCopy, UnexpectedMessageDuringCopyIn) {
  Harness h;
  std::string out = after_startup(h.run(
      startup() + msgs({fe::Query{"copy in"}, fe::Query{"rows 1"}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "GEZ");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"08P01"});
}

TEST(SessionCopy, CopyOut) {
  Harness h;
  std::string out =
      after_startup(h.run(startup() + msgs({fe::Query{"copy out"}, fe::Terminate{}})));
  EXPECT_EQ(types(out), "HddcCZ");
}

// --- Malformed input: FATAL 08P01, connection closed ------------------------------

TEST(SessionMalformed, FramingErrorsAreFatal) {
  std::vector<std::string> bad_inputs = {
      std::string("Q\0\0\0\x02", 5),                 // length below 4
      std::string("Q\x7f\xff\xff\xff", 5),           // beyond max_message_bytes
      std::string("?\0\0\0\x04", 5),                 // unknown type
      fe::encode(fe::PasswordMessage{"x"}),          // 'p' outside authentication
      std::string("Q\0\0\0\x09" "abcd\0", 9) + "x",  // garbage after the message: unknown type
      std::string("B\0\0\0\x05\0", 6),               // Bind body too short
      std::string("S\0\0\0\x05x", 6),                // Sync with a body
  };
  for (const auto& bad : bad_inputs) {
    Harness h;
    h.config.max_message_bytes = 1024;
    std::string out =
        after_startup(h.run(startup() + bad + msgs({fe::Query{"rows 1"}, fe::Terminate{}})));
    // Whatever came before, the connection ends with FATAL 08P01 and nothing after it.
    auto messages = be::decode_all(out);
    ASSERT_FALSE(messages.empty());
    auto* error = std::get_if<be::ErrorResponse>(&messages.back());
    ASSERT_NE(error, nullptr) << types(out);
    EXPECT_EQ(error->field('C'), "08P01");
    EXPECT_EQ(error->field('V'), "FATAL");
  }
}

TEST(SessionMalformed, UnknownTypeIsFatalEvenWhileSkipping) {
  Harness h;
  std::string out = after_startup(h.run(startup() + msgs({fe::Parse{"", "fail parse", {}}}) +
                                        std::string("?\0\0\0\x04", 5) + msgs({fe::Sync{}})));
  EXPECT_EQ(types(out), "EE");
  EXPECT_EQ(error_codes(out), (std::vector<std::string>{"42601", "08P01"}));
}

TEST(SessionMalformed, TruncatedMessageAtEofEndsQuietly) {
  Harness h;
  std::string full = fe::encode(fe::Query{"rows 1"});
  std::string out = after_startup(h.run(startup() + full.substr(0, full.size() - 2)));
  EXPECT_EQ(out, "");
  EXPECT_EQ(h.host.unregistered, 1);
}

TEST(SessionMalformed, VanishingClientReleasesTheSession) {
  Harness h;
  ScriptedStream stream(startup() + msgs({fe::Query{"rows 10"}}));
  ProtocolSession session(h.config, h.factory, h.host, stream);
  stream.fail_writes = true;
  session.run();
  EXPECT_EQ(session.state(), ProtocolSession::State::closed);
  EXPECT_EQ(h.host.registered, 1);
}

// --- Cancel ----------------------------------------------------------------------

TEST(SessionCancel, TokenCancelsRunningStatementOnly) {
  Harness h;
  ScriptedStream stream(startup() + msgs({fe::Query{"wait"}, fe::Query{"rows 1"}, fe::Terminate{}}));
  ProtocolSession session(h.config, h.factory, h.host, stream);
  std::thread canceller([&] {
    for (int i = 0; i < 2000 && h.host.tokens.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    session.cancel_token().request(CancelReason::user_request);
  });
  session.run();
  canceller.join();
  std::string out = after_startup(stream.output);
  // The cancelled statement fails with 57014; the next one runs normally.
  EXPECT_EQ(types(out), "EZTDCZ");
  EXPECT_EQ(error_codes(out), std::vector<std::string>{"57014"});
}

}  // namespace
}  // namespace tally::protocol
