#include "protocol/authenticator.hpp"

#include <algorithm>
#include <optional>

#include "protocol/backend_messages.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_buffer.hpp"
#include "protocol/scram.hpp"

namespace tally::protocol {

namespace {

constexpr std::string_view kScramMechanism = "SCRAM-SHA-256";

Error password_failed(const std::string& user) {
  return Error(SqlState::invalid_password,
               "password authentication failed for user \"" + user + "\"", Severity::fatal);
}

// Sends an authentication request and reads the client's 'p' answer.
std::string exchange(MessageChannel& channel, backend::AuthCode code, std::string data) {
  backend::encode(backend::Authentication{code, std::move(data)}, channel.out());
  char type = 0;
  std::string body;
  if (!channel.read_message(type, body, frontend::kMaxAuthTokenLength)) {
    throw ConnectionLost("client closed during authentication");
  }
  if (type != 'p') {
    throw protocol_violation("expected password response, got message type " +
                             std::to_string(static_cast<unsigned char>(type)));
  }
  return body;
}

bool password_matches(const config::UserConfig& user, std::string_view password) {
  if (password.empty()) return false;
  if (auto verifier = parse_scram_verifier(user.scram_verifier)) {
    return scram_verifier_matches(*verifier, password);
  }
  if (!user.md5_hash.empty()) return md5_password_hash(password, user.name) == user.md5_hash;
  return false;
}

void cleartext(MessageChannel& channel, const config::UserConfig& user) {
  std::string body = exchange(channel, backend::AuthCode::cleartext_password, "");
  std::string password = frontend::decode_password(body);
  if (!password_matches(user, password)) throw password_failed(user.name);
}

void md5(MessageChannel& channel, const config::UserConfig& user) {
  std::string salt = random_bytes(4);
  std::string body = exchange(channel, backend::AuthCode::md5_password, salt);
  std::string response = frontend::decode_password(body);
  if (response != md5_salted_response(user.md5_hash, salt)) throw password_failed(user.name);
}

void scram(MessageChannel& channel, const config::UserConfig& user,
           std::optional<ScramVerifier> verifier) {
  std::string mechanisms = std::string(kScramMechanism) + std::string("\0\0", 2);
  std::string body = exchange(channel, backend::AuthCode::sasl, mechanisms);
  auto initial = frontend::decode_sasl_initial_response(body);
  if (initial.mechanism != kScramMechanism) {
    throw protocol_violation("client selected an invalid SASL authentication mechanism");
  }
  if (!initial.data) throw protocol_violation("malformed SCRAM message");
  if (!verifier) {
    // PostgreSQL runs a mock exchange for users without a usable verifier so
    // that the answer does not reveal it; a failure at the end has the same effect.
    throw password_failed(user.name);
  }
  ScramServer server(*verifier);
  std::string server_first = server.client_first(*initial.data);
  std::string client_final = exchange(channel, backend::AuthCode::sasl_continue, server_first);
  auto server_final = server.client_final(client_final);
  if (!server_final) throw password_failed(user.name);
  backend::encode(backend::Authentication{backend::AuthCode::sasl_final, *server_final},
                  channel.out());
}

// The exchange an unknown user goes through: the strongest password method
// any configured user has, as a pg_hba.conf line for all users would ask for.
// Only when every user is trust does the answer name the missing role (as
// PostgreSQL's trust does): there is no password to guess then.
[[noreturn]] void mock_authentication(MessageChannel& channel,
                                      const std::vector<config::UserConfig>& users,
                                      const std::string& name) {
  auto uses = [&](auto predicate) { return std::any_of(users.begin(), users.end(), predicate); };
  const config::UserConfig mock{name, config::AuthMethod::password, "", ""};
  if (uses([](const config::UserConfig& u) {
        return u.method == config::AuthMethod::scram_sha_256 ||
               (u.method == config::AuthMethod::md5 && u.md5_hash.empty());
      })) {
    scram(channel, mock, mock_scram_verifier(name));
  } else if (uses([](const config::UserConfig& u) { return u.method == config::AuthMethod::md5; })) {
    exchange(channel, backend::AuthCode::md5_password, random_bytes(4));
  } else if (uses([](const config::UserConfig& u) {
               return u.method == config::AuthMethod::password;
             })) {
    exchange(channel, backend::AuthCode::cleartext_password, "");
  } else {
    throw Error(SqlState::invalid_authorization_specification,
                "role \"" + name + "\" does not exist", Severity::fatal);
  }
  throw password_failed(name);
}

}  // namespace

void authenticate(MessageChannel& channel, const std::vector<config::UserConfig>& users,
                  const AuthenticationRequest& request) {
  auto it = std::find_if(users.begin(), users.end(),
                         [&](const config::UserConfig& u) { return u.name == request.user; });
  if (it == users.end()) mock_authentication(channel, users, request.user);
  const config::UserConfig& user = *it;
  switch (user.method) {
    case config::AuthMethod::trust:
      if (!request.peer_is_loopback) {
        throw Error(SqlState::invalid_authorization_specification,
                    "no pg_hba.conf entry for host \"" + request.peer_host + "\", user \"" +
                        request.user + "\", database \"" + request.database + "\", " +
                        (request.tls ? "SSL encryption" : "no encryption"),
                    Severity::fatal);
      }
      return;
    case config::AuthMethod::password:
      cleartext(channel, user);
      return;
    case config::AuthMethod::md5:
      // Like PostgreSQL: md5 with only a SCRAM verifier stored runs SCRAM.
      if (user.md5_hash.empty()) {
        scram(channel, user, parse_scram_verifier(user.scram_verifier));
      } else {
        md5(channel, user);
      }
      return;
    case config::AuthMethod::scram_sha_256:
      scram(channel, user, parse_scram_verifier(user.scram_verifier));
      return;
  }
}

}  // namespace tally::protocol
