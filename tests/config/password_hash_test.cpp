// Password hashes against values PostgreSQL 15 itself produced
// (CREATE ROLE ... PASSWORD, then SELECT rolpassword FROM pg_authid).
#include "config/password_hash.hpp"

#include <gtest/gtest.h>

namespace tally::config {
namespace {

// PostgreSQL 15: SET password_encryption='scram-sha-256'; CREATE ROLE alice PASSWORD 'correct horse';
constexpr const char* pg_alice_verifier =
    "SCRAM-SHA-256$4096:2BI2G+KzBYvqIEBlgrzqsQ==$FPI8lgrxsbIjeaBj/x1YTggcNQ8Rm6wwRus1YvhDEUk=:"
    "18i2X0TzytAnYWcQwhHHHoNkQWHXB/ln5S7m58sBEtY=";

TEST(PasswordHash, ScramMatchesPostgresWithTheSameSalt) {
  auto parsed = parse_scram_verifier(pg_alice_verifier);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->iterations, 4096);
  EXPECT_EQ(parsed->salt.size(), 16u);
  EXPECT_EQ(make_scram_verifier("correct horse", parsed->salt, 4096), pg_alice_verifier);
  EXPECT_TRUE(scram_password_matches(*parsed, "correct horse"));
  EXPECT_FALSE(scram_password_matches(*parsed, "correct horsE"));
  EXPECT_FALSE(scram_password_matches(*parsed, ""));
}

TEST(PasswordHash, FreshVerifiersUseRandomSaltsAndVerify) {
  // The password holds characters that base64 and the verifier's syntax never
  // use, so finding it in the verifier means it leaked (a short password such
  // as "pw" turns up in random base64 by chance, about one run in forty).
  const std::string password = "correct horse!";
  std::string a = make_scram_verifier(password);
  std::string b = make_scram_verifier(password);
  EXPECT_NE(a, b);
  auto pa = parse_scram_verifier(a);
  ASSERT_TRUE(pa);
  EXPECT_EQ(pa->iterations, scram_default_iterations);
  EXPECT_EQ(pa->salt.size(), size_t(scram_salt_bytes));
  EXPECT_TRUE(scram_password_matches(*pa, password));
  EXPECT_FALSE(scram_password_matches(*pa, "correct horse"));
  EXPECT_EQ(a.find(password), std::string::npos);
  EXPECT_EQ(a.find(' '), std::string::npos);
}

TEST(PasswordHash, Md5MatchesPostgres) {
  // PostgreSQL 15: SET password_encryption='md5'; CREATE ROLE bob PASSWORD 'secret';
  EXPECT_EQ(make_md5_hash("secret", "bob"), "md521f3163f8f86fa10bdefbfbd502a8f06");
  EXPECT_TRUE(is_md5_hash("md521f3163f8f86fa10bdefbfbd502a8f06"));
  EXPECT_FALSE(is_md5_hash("md521f3163f8f86fa10bdefbfbd502a8f0"));
  EXPECT_FALSE(is_md5_hash("md521F3163f8f86fa10bdefbfbd502a8f06"));
  EXPECT_FALSE(is_md5_hash("xx521f3163f8f86fa10bdefbfbd502a8f06"));
}

TEST(PasswordHash, MalformedVerifiersAreRejected) {
  EXPECT_FALSE(parse_scram_verifier(""));
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$"));
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-1$4096:2BI2G+KzBYvqIEBlgrzqsQ==$a:b"));
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$0:2BI2G+KzBYvqIEBlgrzqsQ==$"
                                    "FPI8lgrxsbIjeaBj/x1YTggcNQ8Rm6wwRus1YvhDEUk=:"
                                    "18i2X0TzytAnYWcQwhHHHoNkQWHXB/ln5S7m58sBEtY="));
  // StoredKey one byte short.
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$4096:2BI2G+KzBYvqIEBlgrzqsQ==$"
                                    "FPI8lgrxsbIjeaBj/x1YTggcNQ8Rm6wwRus1YvhDEQ==:"
                                    "18i2X0TzytAnYWcQwhHHHoNkQWHXB/ln5S7m58sBEtY="));
  EXPECT_FALSE(parse_scram_verifier("SCRAM-SHA-256$4096:2BI2G+KzBYvqIEBlgrzqsQ==$"
                                    "FPI8lgrxsbIjeaBj/x1YTggcNQ8Rm6wwRus1YvhDEUk=:"
                                    "18i2X0TzytAnYWcQwhHHHoNkQWHXB/ln5S7m58sBEt!="));
}

TEST(PasswordHash, Base64RoundTripsEveryLengthAndRejectsJunk) {
  std::string bytes;
  for (int n = 0; n < 40; ++n) {
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
    bytes += char(n * 37 + 11);
  }
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_FALSE(base64_decode("Zm8"));
  EXPECT_FALSE(base64_decode("Z=8="));
  EXPECT_FALSE(base64_decode("Zm9v=mFy"));
}

}  // namespace
}  // namespace tally::config
