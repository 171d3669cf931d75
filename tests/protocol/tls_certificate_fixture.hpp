#pragma once
// A test fixture that makes a self-signed certificate and key (CN=localhost)
// in a private temporary directory for TLS tests, and removes them after.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tally::testing {

class TlsCertificateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tally-tls-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    std::filesystem::create_directories(dir_);
    std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
                          " -keyout " + (dir_ / "key.pem").string() +
                          " -out " + (dir_ / "cert.pem").string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << "openssl is needed (scripts/setup.sh installs it)";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string cert_file() const { return (dir_ / "cert.pem").string(); }
  std::string key_file() const { return (dir_ / "key.pem").string(); }

  std::filesystem::path dir_;
};

}  // namespace tally::testing
