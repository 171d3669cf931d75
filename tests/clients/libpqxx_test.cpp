// libpqxx against tallyd (run through tallyd_harness.py, which sets the
// TALLY_TEST_* environment): password, SCRAM and MD5 users, with and without
// TLS, SELECT 1, a server-side prepared statement (Parse/Bind/Execute),
// parameters through exec_params, a failing statement's SQLSTATE, and a
// transaction block.
#include <gtest/gtest.h>

#include <cstdlib>
#include <pqxx/pqxx>
#include <string>

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) throw std::runtime_error(std::string("missing ") + name);
  return value;
}

std::string connection_string(const std::string& user, const std::string& sslmode) {
  return "host=localhost hostaddr=" + env("TALLY_TEST_HOST") + " port=" + env("TALLY_TEST_PORT") +
         " dbname=" + env("TALLY_TEST_DB") + " user=" + user +
         " password=" + env("TALLY_TEST_PASSWORD") + " sslmode=" + sslmode +
         " sslrootcert=" + env("TALLY_TEST_CA") + " connect_timeout=10";
}

struct Case {
  const char* user_variable;
  const char* sslmode;
};

class Libpqxx : public ::testing::TestWithParam<Case> {};

TEST_P(Libpqxx, SimplePreparedAndFailing) {
  pqxx::connection c(connection_string(env(GetParam().user_variable), GetParam().sslmode));
  pqxx::nontransaction n(c);
  EXPECT_EQ(n.exec("SELECT 1")[0][0].as<int>(), 1);

  c.prepare("plus_one", "SELECT $1::int4 + 1");
  EXPECT_EQ(n.exec_prepared("plus_one", 41)[0][0].as<int>(), 42);
  EXPECT_EQ(n.exec_prepared("plus_one", -1)[0][0].as<int>(), 0);
  EXPECT_EQ(n.exec_params("SELECT $1::text", "tally")[0][0].as<std::string>(), "tally");

  try {
    n.exec("SELEC 1");
    FAIL() << "a syntax error succeeded";
  } catch (const pqxx::sql_error& e) {
    EXPECT_EQ(e.sqlstate(), "42601");
  }
  // The connection is still usable after the error.
  EXPECT_EQ(n.exec("SELECT 2")[0][0].as<int>(), 2);
}

TEST_P(Libpqxx, TransactionBlock) {
  pqxx::connection c(connection_string(env(GetParam().user_variable), GetParam().sslmode));
  pqxx::work w(c);
  EXPECT_EQ(w.exec("SELECT 3")[0][0].as<int>(), 3);
  w.commit();
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, Libpqxx,
    ::testing::Values(Case{"TALLY_TEST_PASSWORD_USER", "disable"},
                      Case{"TALLY_TEST_PASSWORD_USER", "verify-full"},
                      Case{"TALLY_TEST_SCRAM_USER", "disable"},
                      Case{"TALLY_TEST_SCRAM_USER", "require"},
                      Case{"TALLY_TEST_SCRAM_USER", "verify-full"},
                      Case{"TALLY_TEST_MD5_USER", "disable"},
                      Case{"TALLY_TEST_MD5_USER", "verify-full"}));

TEST(LibpqxxAuth, WrongPasswordIsRefused) {
  std::string s = "host=" + env("TALLY_TEST_HOST") + " port=" + env("TALLY_TEST_PORT") +
                  " dbname=" + env("TALLY_TEST_DB") + " user=" + env("TALLY_TEST_SCRAM_USER") +
                  " password=wrong sslmode=disable";
  try {
    pqxx::connection c(s);
    FAIL() << "connected with a wrong password";
  } catch (const pqxx::broken_connection& e) {
    EXPECT_NE(std::string(e.what()).find("password authentication failed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
