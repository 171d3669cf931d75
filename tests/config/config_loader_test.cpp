// Every configuration source, their precedence, and every kind of bad value.
#include "config/config_loader.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/password_hash.hpp"
#include "tests/config/config_test_util.hpp"

namespace tally::config {
namespace {

using testing::any_contains;
using testing::joined;
using testing::load;
using testing::problems_of;
using testing::ScratchDir;

TEST(ConfigLoader, DefaultsWithoutAnySource) {
  ScratchDir dir;
  LoadResult r = load({}, {}, dir);
  Config defaults;
  EXPECT_EQ(r.action, LoadAction::run);
  EXPECT_EQ(r.config.port, defaults.port);
  EXPECT_EQ(r.config.listen_address, "127.0.0.1");
  EXPECT_EQ(r.config.http_port, 0);
  EXPECT_EQ(r.config.max_message_bytes, 64u << 20);
  ASSERT_EQ(r.config.users.size(), 2u);
  EXPECT_EQ(r.config.users[0].name, "tally");
  EXPECT_EQ(r.config.users[0].method, AuthMethod::trust);
  EXPECT_EQ(r.config.users[1].name, "postgres");
  EXPECT_EQ(r.config.users[1].method, AuthMethod::trust);
  EXPECT_EQ(r.config.databases, (std::vector<std::string>{"tally", "postgres"}));
  EXPECT_EQ(r.source_of("port"), "default");
  EXPECT_EQ(r.source_of("data_dir"), "TALLY_DATA_DIR");
  EXPECT_TRUE(std::filesystem::is_directory(dir.path("data")));
}

TEST(ConfigLoader, FileThenFlagsThenEnvironment) {
  ScratchDir dir;
  std::string file = dir.write("t.toml",
                               "# comment\n"
                               "port = 6000\n"
                               "http_port = 6001\n"
                               "max_connections = 7\n"
                               "[tuning]\n"
                               "b_max = 3\n"
                               "similarity_s = 0.1\n");
  LoadResult only_file = load({"--config", file}, {}, dir);
  EXPECT_EQ(only_file.config.port, 6000);
  EXPECT_EQ(only_file.config.http_port, 6001);
  EXPECT_EQ(only_file.config.max_connections, 7);
  EXPECT_EQ(only_file.config.tuning.b_max, 3);
  EXPECT_DOUBLE_EQ(only_file.config.tuning.similarity_s, 0.1);
  EXPECT_EQ(only_file.source_of("port"), file + ":2");
  EXPECT_EQ(only_file.source_of("tuning.b_max"), file + ":6");
  EXPECT_EQ(only_file.config_file, file);

  LoadResult with_flags = load({"--config", file, "--port", "6100", "--tuning-b-max=5"}, {}, dir);
  EXPECT_EQ(with_flags.config.port, 6100);
  EXPECT_EQ(with_flags.config.tuning.b_max, 5);
  EXPECT_EQ(with_flags.config.http_port, 6001);
  EXPECT_EQ(with_flags.source_of("port"), "--port");
  EXPECT_EQ(with_flags.source_of("tuning.b_max"), "--tuning-b-max");

  LoadResult with_env = load({"--config", file, "--port", "6100"},
                             {{"TALLY_PORT", "6200"}, {"TALLY_TUNING_SIMILARITY_S", "0.25"}}, dir);
  EXPECT_EQ(with_env.config.port, 6200);
  EXPECT_DOUBLE_EQ(with_env.config.tuning.similarity_s, 0.25);
  EXPECT_EQ(with_env.source_of("port"), "TALLY_PORT");
}

TEST(ConfigLoader, ConfigFileFromEnvironmentWinsOverFlag) {
  ScratchDir dir;
  std::string a = dir.write("a.toml", "port = 7001\n");
  std::string b = dir.write("b.toml", "port = 7002\n");
  LoadResult r = load({"--config", a}, {{"TALLY_CONFIG", b}}, dir);
  EXPECT_EQ(r.config.port, 7002);
  EXPECT_EQ(r.config_file, b);
}

TEST(ConfigLoader, EveryKindOfValueFromText) {
  ScratchDir dir;
  LoadResult r = load({"--listen-address", "::1", "--http-address=0.0.0.0", "--tuning-enabled=off",
                       "--gpu-memory-budget", "8GB", "--column-cache-bytes=512MiB",
                       "--max-message-bytes", "1048576", "--databases", "a, b ,c",
                       "--log-level", "DEBUG", "--log-format=json", "--gpu-device", "-2",
                       "--tls-ca-file", ""},
                      {}, dir);
  EXPECT_EQ(r.config.listen_address, "::1");
  EXPECT_EQ(r.config.http_address, "0.0.0.0");
  EXPECT_FALSE(r.config.tuning.enabled);
  EXPECT_EQ(r.config.gpu_memory_budget, 8ull << 30);
  EXPECT_EQ(r.config.column_cache_bytes, 512ull << 20);
  EXPECT_EQ(r.config.max_message_bytes, 1u << 20);
  EXPECT_EQ(r.config.databases, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.config.log_level, LogLevel::debug);
  EXPECT_EQ(r.config.log_format, LogFormat::json);
  EXPECT_EQ(r.config.gpu_device, -2);

  // A bare boolean flag means true.
  LoadResult bare = load({"--tuning-enabled"}, {{"TALLY_TUNING_ENABLED", "yes"}}, dir);
  EXPECT_TRUE(bare.config.tuning.enabled);
  // A boolean flag takes a boolean word after it, as --help writes it, and
  // is bare before another flag.
  LoadResult words = load({"--tuning-enabled", "false", "--pretouch-heap", "--port", "5433"}, {}, dir);
  EXPECT_FALSE(words.config.tuning.enabled);
  EXPECT_TRUE(words.config.pretouch_heap);
  EXPECT_EQ(words.config.port, 5433);
  LoadResult off = load({"--pretouch-heap", "off"}, {}, dir);
  EXPECT_FALSE(off.config.pretouch_heap);
}

TEST(ConfigLoader, EveryKindOfValueFromToml) {
  ScratchDir dir;
  std::string file = dir.write("t.toml",
                               "listen_address = \"0.0.0.0\"\n"
                               "databases = [\"x\", \"y\"]\n"
                               "gpu_memory_budget = \"2GB\"\n"
                               "cpu_memory_budget = 4096\n"
                               "statement_timeout_ms = 1500\n"
                               "log_format = \"json\"\n"
                               "[tuning]\n"
                               "enabled = false\n"
                               "pruning_p = 2\n");
  LoadResult r = load({"--config", file}, {}, dir);
  EXPECT_EQ(r.config.listen_address, "0.0.0.0");
  EXPECT_EQ(r.config.databases, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r.config.gpu_memory_budget, 2ull << 30);
  EXPECT_EQ(r.config.cpu_memory_budget, 4096u);
  EXPECT_EQ(r.config.statement_timeout_ms, 1500u);
  EXPECT_EQ(r.config.log_format, LogFormat::json);
  EXPECT_FALSE(r.config.tuning.enabled);
  EXPECT_DOUBLE_EQ(r.config.tuning.pruning_p, 2.0);  // an integer is fine for a float
}

TEST(ConfigLoader, UsersFromTomlAreHashedAtRest) {
  ScratchDir dir;
  std::string verifier = make_scram_verifier("given");
  std::string file = dir.write("u.toml",
                               "[[users]]\nname = \"alice\"\nmethod = \"scram-sha-256\"\n"
                               "password = \"s3cret\"\n"
                               "[[users]]\nname = \"bob\"\nmethod = \"md5\"\npassword = \"pw\"\n"
                               "[[users]]\nname = \"carol\"\nmethod = \"password\"\n"
                               "scram_verifier = \"" + verifier + "\"\n"
                               "[[users]]\nname = \"dave\"\nmethod = \"trust\"\n");
  LoadResult r = load({"--config", file}, {}, dir);
  ASSERT_EQ(r.config.users.size(), 4u);
  const UserConfig& alice = r.config.users[0];
  EXPECT_EQ(alice.method, AuthMethod::scram_sha_256);
  auto parsed = parse_scram_verifier(alice.scram_verifier);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(scram_password_matches(*parsed, "s3cret"));
  EXPECT_TRUE(alice.md5_hash.empty()) << "md5 hashes are kept only for md5 users";
  EXPECT_EQ(r.config.users[1].md5_hash, make_md5_hash("pw", "bob"));
  EXPECT_EQ(r.config.users[2].scram_verifier, verifier);
  EXPECT_EQ(r.config.users[3].method, AuthMethod::trust);
  // Nothing printable carries the plain password.
  std::string printed = render_config(r);
  EXPECT_EQ(printed.find("s3cret"), std::string::npos);
  EXPECT_NE(printed.find("alice"), std::string::npos);
}

TEST(ConfigLoader, UsersFromFlagsAndEnvironment) {
  ScratchDir dir;
  LoadResult flags = load({"--user", "a:trust", "--user=b:scram-sha-256:pw:with:colons"}, {}, dir);
  ASSERT_EQ(flags.config.users.size(), 2u);
  EXPECT_EQ(flags.config.users[1].name, "b");
  auto parsed = parse_scram_verifier(flags.config.users[1].scram_verifier);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(scram_password_matches(*parsed, "pw:with:colons"));
  EXPECT_EQ(flags.source_of("users"), "--user");

  LoadResult env = load({"--user", "a:trust"}, {{"TALLY_USERS", "x:md5:m,y:trust"}}, dir);
  ASSERT_EQ(env.config.users.size(), 2u);
  EXPECT_EQ(env.config.users[0].md5_hash, make_md5_hash("m", "x"));
  EXPECT_EQ(env.source_of("users"), "TALLY_USERS");
}

TEST(ConfigLoader, HelpVersionAndPrintConfig) {
  ScratchDir dir;
  LoadResult help = load({"--port", "nonsense", "--help"}, {}, dir);
  EXPECT_EQ(help.action, LoadAction::exit_ok);
  for (const char* flag : {"--config FILE", "--port PORT", "--http-port PORT", "--data-dir PATH",
                           "--listen-address ADDRESS", "--tuning-similarity-s X", "--user",
                           "TALLY_HTTP_PORT", "default: 5432", "default: \"64MB\""})
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag;

  LoadResult version = load({"--version"}, {}, dir);
  EXPECT_EQ(version.action, LoadAction::exit_ok);
  EXPECT_EQ(version.output.rfind("tallyd (Tally) ", 0), 0u);

  // --print-config writes TOML that loads back into the same configuration.
  LoadResult printed = load({"--print-config", "--port", "6543", "--user", "u:scram-sha-256:pw",
                             "--databases", "d1,d2", "--http-token", "tok"},
                            {}, dir);
  EXPECT_EQ(printed.action, LoadAction::exit_ok);
  EXPECT_NE(printed.output.find("port = 6543  # --port"), std::string::npos) << printed.output;
  EXPECT_EQ(printed.output.find("tok\""), std::string::npos) << "the token is a secret";
  std::string file = dir.write("printed.toml", printed.output);
  LoadResult again = load({"--config", file, "--print-config"}, {}, dir);
  EXPECT_EQ(again.config.port, 6543);
  EXPECT_EQ(again.config.databases, printed.config.databases);
  ASSERT_EQ(again.config.users.size(), 1u);
  EXPECT_EQ(again.config.users[0].scram_verifier, printed.config.users[0].scram_verifier);
}

TEST(ConfigLoader, UnknownKeysNameFileAndLine) {
  ScratchDir dir;
  std::string file = dir.write("bad.toml", "port = 5433\nprot = 5\n[tuning]\nbmax = 3\n[nope]\nx=1\n");
  auto problems = problems_of({"--config", file}, {}, dir);
  EXPECT_TRUE(any_contains(problems, {"unknown setting \"prot\"", file + ":2"})) << joined(problems);
  EXPECT_TRUE(any_contains(problems, {"unknown setting \"tuning.bmax\"", file + ":4"})) << joined(problems);
  EXPECT_TRUE(any_contains(problems, {"unknown setting \"nope\"", file + ":"})) << joined(problems);
  EXPECT_EQ(problems.size(), 3u) << joined(problems);
}

TEST(ConfigLoader, WrongTypesInToml) {
  ScratchDir dir;
  std::string file = dir.write("bad.toml",
                               "port = \"5433\"\n"
                               "listen_address = 127\n"
                               "databases = \"tally\"\n"
                               "tuning = 3\n"
                               "log_level = true\n"
                               "users = \"alice\"\n");
  auto problems = problems_of({"--config", file}, {}, dir);
  EXPECT_TRUE(any_contains(problems, {"\"port\"", file + ":1", "expected an integer, got a string"}))
      << joined(problems);
  EXPECT_TRUE(any_contains(problems, {"\"listen_address\"", file + ":2", "expected a string"}));
  EXPECT_TRUE(any_contains(problems, {"\"databases\"", file + ":3", "array of strings"}));
  EXPECT_TRUE(any_contains(problems, {"\"tuning\"", file + ":4", "expected a table"}));
  EXPECT_TRUE(any_contains(problems, {"\"log_level\"", file + ":5"}));
  EXPECT_TRUE(any_contains(problems, {"\"users\"", file + ":6"}));
  EXPECT_EQ(problems.size(), 6u) << joined(problems);
}

TEST(ConfigLoader, OutOfRangeAndMalformedValuesNameTheirSource) {
  ScratchDir dir;
  std::string file = dir.write("bad.toml", "port = 70000\nmax_connections = 0\n");
  auto p = problems_of({"--config", file, "--http-port", "-1", "--tuning-pruning-p=0.5",
                        "--chunk-rows", "12x", "--gpu-memory-budget", "3 parsecs"},
                       {{"TALLY_STATEMENT_TIMEOUT_MS", "abc"}, {"TALLY_TUNING_ENABLED", "maybe"},
                        {"TALLY_LOG_LEVEL", "verbose"}, {"TALLY_LISTEN_ADDRESS", "example.com"}},
                       dir);
  EXPECT_TRUE(any_contains(p, {"\"port\"", file + ":1", "70000 is out of range (1..65535)"})) << joined(p);
  EXPECT_TRUE(any_contains(p, {"\"max_connections\"", file + ":2", "out of range"}));
  EXPECT_TRUE(any_contains(p, {"\"http_port\"", "from --http-port", "out of range"}));
  EXPECT_TRUE(any_contains(p, {"\"tuning.pruning_p\"", "from --tuning-pruning-p", "out of range"}));
  EXPECT_TRUE(any_contains(p, {"\"chunk_rows\"", "--chunk-rows", "not an integer"}));
  EXPECT_TRUE(any_contains(p, {"\"gpu_memory_budget\"", "--gpu-memory-budget", "unit"}));
  EXPECT_TRUE(any_contains(p, {"\"statement_timeout_ms\"", "TALLY_STATEMENT_TIMEOUT_MS"}));
  EXPECT_TRUE(any_contains(p, {"\"tuning.enabled\"", "TALLY_TUNING_ENABLED", "boolean"}));
  EXPECT_TRUE(any_contains(p, {"\"log_level\"", "TALLY_LOG_LEVEL", "debug|info|warning|error"}));
  EXPECT_TRUE(any_contains(p, {"\"listen_address\"", "TALLY_LISTEN_ADDRESS", "not an IPv4 or IPv6"}));
  EXPECT_EQ(p.size(), 10u) << joined(p);
}

TEST(ConfigLoader, BadCommandLines) {
  ScratchDir dir;
  auto p = problems_of({"--prot", "5", "stray", "--port"}, {}, dir);
  EXPECT_TRUE(any_contains(p, {"unknown command-line flag --prot"})) << joined(p);
  EXPECT_TRUE(any_contains(p, {"unexpected command-line argument \"5\""})) << joined(p);
  EXPECT_TRUE(any_contains(p, {"flag --port needs a value"})) << joined(p);
}

TEST(ConfigLoader, UnknownEnvironmentVariablesWarnOnly) {
  ScratchDir dir;
  LoadResult r = load({}, {{"TALLY_BUILD_DIR", "x"}, {"OTHER", "y"}}, dir);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("TALLY_BUILD_DIR"), std::string::npos);
}

TEST(ConfigLoader, MissingAndUnparsableFiles) {
  ScratchDir dir;
  auto missing = problems_of({"--config", dir.path("absent.toml")}, {}, dir);
  EXPECT_TRUE(any_contains(missing, {"absent.toml", "--config", "cannot be read"})) << joined(missing);
  std::string file = dir.write("syntax.toml", "port = 5433\n\nport = = 4\n");
  auto syntax = problems_of({}, {{"TALLY_CONFIG", file}}, dir);
  EXPECT_TRUE(any_contains(syntax, {file + ":3:"})) << joined(syntax);
}

TEST(ConfigLoader, DataDirectoryMustBeUsable) {
  ScratchDir dir;
  std::string file = dir.write("plain-file", "x");
  auto under_file = problems_of({"--data-dir", file + "/sub"}, {{"TALLY_DATA_DIR", ""}}, dir);
  EXPECT_TRUE(any_contains(under_file, {"\"data_dir\"", "--data-dir", "cannot be created"}))
      << joined(under_file);
  auto is_file = problems_of({}, {{"TALLY_DATA_DIR", file}}, dir);
  EXPECT_TRUE(any_contains(is_file, {"\"data_dir\"", "TALLY_DATA_DIR", "not a directory"}))
      << joined(is_file);
  // A nested directory that does not exist yet is created.
  LoadResult ok = load({}, {{"TALLY_DATA_DIR", dir.path("a/b/c")}}, dir);
  EXPECT_TRUE(std::filesystem::is_directory(dir.path("a/b/c")));
}

TEST(ConfigLoader, TlsFilesMustExistAndComeInPairs) {
  ScratchDir dir;
  std::string cert = dir.write("server.crt", "-----BEGIN CERTIFICATE-----\n");
  auto only_cert = problems_of({"--tls-cert-file", cert}, {}, dir);
  EXPECT_TRUE(any_contains(only_cert, {"\"tls_cert_file\"", "--tls-cert-file", "tls_key_file is not set"}))
      << joined(only_cert);
  auto missing_key = problems_of({"--tls-cert-file", cert}, {{"TALLY_TLS_KEY_FILE", dir.path("no.key")}}, dir);
  EXPECT_TRUE(any_contains(missing_key, {"\"tls_key_file\"", "TALLY_TLS_KEY_FILE", "does not exist"}))
      << joined(missing_key);
  std::string key = dir.write("server.key", "-----BEGIN PRIVATE KEY-----\n");
  LoadResult ok = load({"--tls-cert-file", cert, "--tls-key-file", key}, {}, dir);
  EXPECT_EQ(ok.config.tls_key_file, key);
  auto ca_without_tls = problems_of({"--tls-ca-file", cert}, {}, dir);
  EXPECT_TRUE(any_contains(ca_without_tls, {"\"tls_ca_file\"", "needs TLS"})) << joined(ca_without_tls);
}

TEST(ConfigLoader, BadUsers) {
  ScratchDir dir;
  std::string file = dir.write("users.toml",
                               "[[users]]\nname = \"a\"\nmethod = \"kerberos\"\n"
                               "[[users]]\nname = \"b\"\nmethod = \"scram-sha-256\"\n"
                               "[[users]]\nmethod = \"trust\"\n"
                               "[[users]]\nname = \"c\"\nmethod = \"trust\"\nrole = \"admin\"\n"
                               "[[users]]\nname = \"d\"\nmethod = \"md5\"\nscram_verifier = \"SCRAM-SHA-256$1:x\"\n"
                               "[[users]]\nname = \"e\"\nmethod = \"trust\"\n"
                               "[[users]]\nname = \"e\"\nmethod = \"trust\"\n");
  auto p = problems_of({"--config", file}, {}, dir);
  EXPECT_TRUE(any_contains(p, {"\"users.method\"", file + ":3", "not an authentication method"})) << joined(p);
  EXPECT_TRUE(any_contains(p, {"\"users.name\"", file + ":"})) << joined(p);
  EXPECT_TRUE(any_contains(p, {"unknown setting \"users.role\"", file + ":12"})) << joined(p);
  EXPECT_TRUE(any_contains(p, {"\"users.scram_verifier\"", file + ":16"})) << joined(p);
  EXPECT_EQ(p.size(), 4u) << joined(p);
  // Validation after loading: b has no password, e is duplicated. The file
  // is not validated further when a value already failed, so check separately.
  std::string file2 = dir.write("users2.toml",
                                "[[users]]\nname = \"b\"\nmethod = \"scram-sha-256\"\n"
                                "[[users]]\nname = \"m\"\nmethod = \"md5\"\n"
                                "[[users]]\nname = \"e\"\nmethod = \"trust\"\n"
                                "[[users]]\nname = \"e\"\nmethod = \"trust\"\n");
  auto p2 = problems_of({"--config", file2}, {}, dir);
  EXPECT_TRUE(any_contains(p2, {"\"users\"", "\"b\"", "needs a password"})) << joined(p2);
  EXPECT_TRUE(any_contains(p2, {"\"users\"", "\"m\"", "needs a password"})) << joined(p2);
  EXPECT_TRUE(any_contains(p2, {"\"users\"", "\"e\" is defined twice"})) << joined(p2);
  auto p3 = problems_of({"--user", "x:ldap:pw"}, {}, dir);
  EXPECT_TRUE(any_contains(p3, {"\"users\"", "--user", "not an authentication method"})) << joined(p3);
  auto p4 = problems_of({}, {{"TALLY_USERS", "nomethod"}}, dir);
  EXPECT_TRUE(any_contains(p4, {"\"users\"", "TALLY_USERS", "NAME:METHOD"})) << joined(p4);
}

TEST(ConfigLoader, AdminPortMayNotEqualPostgresPort) {
  ScratchDir dir;
  auto p = problems_of({"--port", "6000"}, {{"TALLY_HTTP_PORT", "6000"}}, dir);
  EXPECT_TRUE(any_contains(p, {"\"http_port\"", "TALLY_HTTP_PORT", "6000"})) << joined(p);
}

// A free port: bound by the kernel's choice, then released.
uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(ConfigLoader, PortsInUseNameTheirSettingAndSource) {
  ScratchDir dir;
  int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
  std::string port = std::to_string(ntohs(a.sin_port));

  LoadResult busy_pg = load({"--port", port}, {}, dir);
  try {
    check_ports_available(busy_pg);
    ADD_FAILURE() << "a port in use passed";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(any_contains(e.problems(), {"\"port\" from --port", "127.0.0.1:" + port, "already in use"}))
        << e.what();
  }
  LoadResult busy_http = load({}, {{"TALLY_HTTP_PORT", port}, {"TALLY_PORT", std::to_string(free_port())}}, dir);
  try {
    check_ports_available(busy_http);
    ADD_FAILURE() << "a port in use passed";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 1u) << e.what();
    EXPECT_TRUE(any_contains(e.problems(), {"\"http_port\" from TALLY_HTTP_PORT", "already in use"})) << e.what();
  }
  ::close(taken);
  LoadResult free = load({"--port", std::to_string(free_port())}, {}, dir);
  EXPECT_NO_THROW(check_ports_available(free));
  // An address this host does not have (TEST-NET-1, RFC 5737).
  LoadResult foreign = load({"--listen-address", "192.0.2.1", "--port", std::to_string(free_port())}, {}, dir);
  try {
    check_ports_available(foreign);
    ADD_FAILURE() << "a foreign address passed";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(any_contains(e.problems(), {"\"port\"", "192.0.2.1", "no such address"})) << e.what();
  }
}

TEST(ConfigLoader, ErrorMessageListsEveryProblem) {
  ScratchDir dir;
  try {
    load({"--port", "0", "--log-format", "xml"}, {}, dir);
    FAIL() << "should not load";
  } catch (const ConfigError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.rfind("invalid configuration:", 0), 0u);
    EXPECT_NE(what.find("\"port\" from --port"), std::string::npos) << what;
    EXPECT_NE(what.find("\"log_format\" from --log-format"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tally::config
