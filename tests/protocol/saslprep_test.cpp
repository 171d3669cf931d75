// SASLprep (RFC 4013) as PostgreSQL 15 applies it to SCRAM passwords: the RFC's
// examples, PostgreSQL's fall-backs (ASCII untouched; invalid UTF-8 and
// prohibited input hashed unnormalized), and verifiers PostgreSQL 15 itself
// stored for non-ASCII passwords (SET password_encryption = 'scram-sha-256';
// CREATE ROLE rN LOGIN PASSWORD E'...'; SELECT rolpassword FROM pg_authid).
#include <gtest/gtest.h>

#include <string>

#include "common/saslprep.hpp"
#include "protocol/scram.hpp"

namespace tally::protocol {
namespace {

TEST(Saslprep, Rfc4013Examples) {
  EXPECT_EQ(saslprep("I\u00ADX").password, "IX");  // SOFT HYPHEN maps to nothing
  EXPECT_EQ(saslprep("user").password, "user");
  EXPECT_EQ(saslprep("USER").password, "USER");     // no case folding
  EXPECT_EQ(saslprep("\u00AA").password, "a");      // NFKC
  EXPECT_EQ(saslprep("\u2168").password, "IX");     // NFKC
  EXPECT_EQ(saslprep("\u2168").result, SaslprepResult::normalized);
  // <U+0627><U+0031>: RandALCat then L-less digit breaks the bidi rule.
  const auto bidi = saslprep("\u0627\u0031");
  EXPECT_EQ(bidi.result, SaslprepResult::prohibited);
  EXPECT_EQ(bidi.password, "\u0627\u0031");  // PostgreSQL hashes it unnormalized
}

TEST(Saslprep, NonAsciiSpaceBecomesSpace) {
  EXPECT_EQ(saslprep("a\u00A0b").password, "a b");
  EXPECT_EQ(saslprep("a\u3000b").password, "a b");
}

TEST(Saslprep, AsciiIsUsedAsItIs) {
  // pg_saslprep returns ASCII input without the prohibited-output check.
  const auto control = saslprep(std::string("a\x07z"));
  EXPECT_EQ(control.result, SaslprepResult::unchanged_ascii);
  EXPECT_EQ(control.password, std::string("a\x07z"));
  EXPECT_EQ(saslprep("").password, "");
}

TEST(Saslprep, InvalidUtf8AndUnassignedAreUsedUnnormalized) {
  const std::string bad = "pass\xC3\x28word";  // a lead byte without its continuation
  EXPECT_EQ(saslprep(bad).result, SaslprepResult::invalid_utf8);
  EXPECT_EQ(saslprep(bad).password, bad);
  const std::string overlong = "\xC0\xAF";  // '/' spelled in two bytes
  EXPECT_EQ(saslprep(overlong).result, SaslprepResult::invalid_utf8);
  // U+0221 was unassigned in Unicode 3.2 (RFC 3454 table A.1).
  EXPECT_EQ(saslprep("\u0221").result, SaslprepResult::prohibited);
  EXPECT_EQ(saslprep("\u0221").password, "\u0221");
}

struct PostgresVerifier {
  const char* password;
  const char* verifier;
};

// Stored by PostgreSQL 15.x (Debian 12) for the passwords shown.
constexpr PostgresVerifier kPostgresVerifiers[] = {
    {"\u2168",  // normalizes to "IX"
     "SCRAM-SHA-256$4096:7KSSn3g7hj3Hym5QafprMw==$KywRffc3LC2uVqEXGX1W+6pgMYe6+iyfWfy4GGqgCUA=:"
     "qAxFBjJGx5NakUbwVRT/jpPLTsWaC5tzfivoBW/KtHw="},
    {"I\u00ADX",  // normalizes to "IX"
     "SCRAM-SHA-256$4096:OWPzJiroFBd7Ql4KcHEBbA==$f8yRq36kjfXi1sQ/cTCNLNhSbyPwkxi8qoMSOM8Oop4=:"
     "HBpQM8LQtfyakT7LmhucwSbhtP5CzBTxIuv5fBPLpmA="},
    {"a\u00A0b",  // normalizes to "a b"
     "SCRAM-SHA-256$4096:b2+6nO/PjLGa4UvXVZ/xCQ==$69S3Tuf5uUXMdUC+AnrK5kJgnNvp5gh97zmVRCaB3CA=:"
     "gC9o6xIsV4qxaZem5dvsbPYFvPfVd9OQo8bf8Cd47/M="},
    {"\u0627\u0031",  // prohibited (bidi): hashed as it is
     "SCRAM-SHA-256$4096:7MExR7WUiPyenm90rpPuaw==$JoXpT1byu6/5oYyWKsIsU4V2oxAIYqB5eGIMTquhcaA=:"
     "dAKuNNLnW+/iWI8w3Mb39vzn16jLX/u0DcKrwcFz1As="},
    {"\u0221",  // unassigned in Unicode 3.2: hashed as it is
     "SCRAM-SHA-256$4096:k/Z0LwFYN6Zf5yNsgrUSrA==$ojplo4RzchuTEYnOMMbyyy7EBi+eKF/JB7VlUpO/y0Q=:"
     "bTcLJ3X3lPyLdmZ2WVCIE2piD7EslaRWsOWU83Wo/bc="},
    {"\u00AA\u00B5",  // normalizes to "a\u03BC"
     "SCRAM-SHA-256$4096:1GexUM+wNj7eEqY2bLZUHA==$MIvYesg3C+0nLqra2H5oX6fkqrfRfoJyMH/uyO/BzoA=:"
     "J7IaP9lrcu7ZUbTkdzkHVeOQ3joMYd2oXBhev0Tx6hk="},
};

TEST(Saslprep, VerifiersMatchPostgres) {
  for (const auto& [password, verifier] : kPostgresVerifiers) {
    SCOPED_TRACE(password);
    const auto parsed = parse_scram_verifier(verifier);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(make_scram_verifier(password, parsed->iterations, parsed->salt), verifier);
    // Cleartext authentication against the stored verifier.
    EXPECT_TRUE(scram_verifier_matches(*parsed, password));
  }
}

TEST(Saslprep, NormalizationEqualSpellingsShareAVerifier) {
  const auto nine = parse_scram_verifier(kPostgresVerifiers[0].verifier);
  ASSERT_TRUE(nine.has_value());
  EXPECT_TRUE(scram_verifier_matches(*nine, "IX"));
  EXPECT_TRUE(scram_verifier_matches(*nine, "I\u00ADX"));
  EXPECT_FALSE(scram_verifier_matches(*nine, "ix"));
  // Prohibited input is not normalized: the bidi password's NFKC-equal
  // spelling does not match (PostgreSQL: the same).
  const auto bidi = parse_scram_verifier(kPostgresVerifiers[3].verifier);
  ASSERT_TRUE(bidi.has_value());
  EXPECT_FALSE(scram_verifier_matches(*bidi, "\uFE8D\u0031"));  // ARABIC LETTER ALEF isolated form
}

TEST(Saslprep, ScramExchangeWithEitherSpelling) {
  // libpq normalizes on the client side; so does ScramClient.
  for (const char* spelling : {"\u2168", "IX", "I\u00ADX"}) {
    SCOPED_TRACE(spelling);
    ScramServer server(*parse_scram_verifier(kPostgresVerifiers[0].verifier));
    ScramClient client(spelling);
    const std::string server_first = server.client_first(client.client_first());
    const auto server_final = server.client_final(client.client_final(server_first));
    ASSERT_TRUE(server_final.has_value());
    EXPECT_TRUE(client.verify_server_final(*server_final));
  }
}

}  // namespace
}  // namespace tally::protocol
