// SCRAM-SHA-256 and MD5 against vectors produced by PostgreSQL 15 itself
// (CREATE ROLE ... PASSWORD, then SELECT rolpassword FROM pg_authid).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "protocol/scram.hpp"

namespace tally::protocol {
namespace {

// PostgreSQL 15: password_encryption = 'scram-sha-256', role alice, password 'pencil'.
constexpr std::string_view kAliceVerifier =
    "SCRAM-SHA-256$4096:6hIwRVfShaARXstz8yQl8g==$d/+i/jR7xeY/0vD5Ifdj25cURIr276r4F4jztd1Qrl4=:"
    "wnEbFYB67Ahc96zJ3oYNsTT7tJpHjWo00NdcIVALdLI=";
// PostgreSQL 15: password_encryption = 'md5', role bob, password 'secret'.
constexpr std::string_view kBobMd5 = "md521f3163f8f86fa10bdefbfbd502a8f06";

TEST(Base64, RoundTripAndRejects) {
  for (std::string s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto decoded = base64_decode(base64_encode(s));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, s);
  }
  EXPECT_EQ(base64_encode("abc"), "YWJj");
  EXPECT_FALSE(base64_decode("YWJ").has_value());
  EXPECT_FALSE(base64_decode("Y=Jj").has_value());
  EXPECT_FALSE(base64_decode("YW*j").has_value());
}

TEST(ScramVerifier, MatchesPostgresFormat) {
  auto salt = base64_decode("6hIwRVfShaARXstz8yQl8g==");
  ASSERT_TRUE(salt.has_value());
  EXPECT_EQ(make_scram_verifier("pencil", 4096, *salt), kAliceVerifier);
  auto parsed = parse_scram_verifier(kAliceVerifier);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->iterations, 4096);
  EXPECT_TRUE(scram_verifier_matches(*parsed, "pencil"));
  EXPECT_FALSE(scram_verifier_matches(*parsed, "pencil2"));
}

TEST(ScramVerifier, RejectsMalformed) {
  EXPECT_FALSE(parse_scram_verifier("").has_value());
  EXPECT_FALSE(parse_scram_verifier("md5abc").has_value());
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$x:YWJj$YWJj:YWJj").has_value());
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$4096:YWJj$YWJj:YWJj").has_value());
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$4096:6hIwRVfShaARXstz8yQl8g==").has_value());
}

TEST(Md5, MatchesPostgres) {
  EXPECT_EQ(md5_password_hash("secret", "bob"), kBobMd5);
  // The salted answer libpq computes: md5(md5(password + user) hex + salt).
  std::string response = md5_salted_response(kBobMd5, "abcd");
  EXPECT_EQ(response.size(), 35u);
  EXPECT_EQ(response.substr(0, 3), "md5");
  EXPECT_NE(response, md5_salted_response(kBobMd5, "abce"));
}

TEST(ScramExchange, ClientAndServerAgree) {
  ScramServer server(*parse_scram_verifier(kAliceVerifier));
  ScramClient client("pencil");
  std::string server_first = server.client_first(client.client_first());
  auto server_final = server.client_final(client.client_final(server_first));
  ASSERT_TRUE(server_final.has_value());
  EXPECT_TRUE(client.verify_server_final(*server_final));
}

TEST(ScramExchange, WrongPasswordFailsProof) {
  ScramServer server(*parse_scram_verifier(kAliceVerifier));
  ScramClient client("wrong");
  std::string server_first = server.client_first(client.client_first());
  EXPECT_FALSE(server.client_final(client.client_final(server_first)).has_value());
}

TEST(ScramExchange, MalformedMessagesAre08P01) {
  auto expect_08p01 = [](auto&& f) {
    try {
      f();
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.state(), SqlState::protocol_violation);
    }
  };
  auto verifier = *parse_scram_verifier(kAliceVerifier);
  expect_08p01([&] { ScramServer(verifier).client_first(""); });
  expect_08p01([&] { ScramServer(verifier).client_first("x,,n=,r=abc"); });
  expect_08p01([&] { ScramServer(verifier).client_first("n,,r=abc"); });
  expect_08p01([&] { ScramServer(verifier).client_first("p=tls-server-end-point,,n=,r=a"); });
  expect_08p01([&] {
    ScramServer server(verifier);
    server.client_first("n,,n=,r=abc");
    server.client_final("c=biws,r=wrongnonce,p=AAAA");
  });
  expect_08p01([&] {
    ScramServer server(verifier);
    server.client_final("c=biws,r=x,p=AAAA");  // out of order
  });
}

}  // namespace
}  // namespace tally::protocol
