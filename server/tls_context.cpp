#include "server/tls_context.hpp"

#include <stdexcept>

namespace tally::server {

namespace ssl = boost::asio::ssl;

std::unique_ptr<ssl::context> make_tls_context(const config::Config& config) {
  if (config.tls_cert_file.empty() || config.tls_key_file.empty()) return nullptr;
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  // PostgreSQL 15's ssl_min_protocol_version default is TLSv1.2.
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                       ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  boost::system::error_code ec;
  context->use_certificate_chain_file(config.tls_cert_file, ec);
  if (ec) {
    throw std::runtime_error("could not load server certificate file \"" + config.tls_cert_file +
                             "\": " + ec.message());
  }
  context->use_private_key_file(config.tls_key_file, ssl::context::pem, ec);
  if (ec) {
    throw std::runtime_error("could not load private key file \"" + config.tls_key_file +
                             "\": " + ec.message());
  }
  if (!config.tls_ca_file.empty()) {
    // A CA for client certificates; requested, not required (no cert auth method yet).
    context->load_verify_file(config.tls_ca_file, ec);
    if (ec) {
      throw std::runtime_error("could not load root certificate file \"" + config.tls_ca_file +
                               "\": " + ec.message());
    }
  }
  return context;
}

}  // namespace tally::server
