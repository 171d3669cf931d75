#pragma once
// The server's TLS context from Config's certificate and key (PEM files).
#include <memory>

#include <boost/asio/ssl/context.hpp>

#include "config/config.hpp"

namespace tally::server {

// Null when TLS is not configured (tls_cert_file or tls_key_file empty).
// Throws std::runtime_error naming the file that cannot be used.
std::unique_ptr<boost::asio::ssl::context> make_tls_context(const config::Config& config);

}  // namespace tally::server
