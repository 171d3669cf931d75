#pragma once
// Client authentication after StartupMessage, per configured user, with
// PostgreSQL's messages and SQLSTATEs: trust (loopback peers only, like the
// default local pg_hba rules), cleartext password, MD5 and SCRAM-SHA-256.
#include <string>
#include <vector>

#include "config/config.hpp"
#include "protocol/message_channel.hpp"

namespace tally::protocol {

struct AuthenticationRequest {
  std::string user;
  std::string database;
  bool peer_is_loopback = false;
  bool tls = false;
  std::string peer_host;
};

// Looks the user up and runs its method's exchange up to, not including,
// AuthenticationOk. An unknown user runs the same exchange as a known one
// (the strongest password method configured) and fails as a wrong password
// does, so the answer does not tell which users exist. Messages in the
// exchange are capped at kMaxAuthTokenLength. Throws FATAL Error: 28P01 for a
// wrong password or an unknown user, 28000 for a refused peer (or an unknown
// user when every user is trust), 08P01 for a malformed or oversized message;
// ConnectionLost when the client hangs up (psql does, to prompt for a password).
void authenticate(MessageChannel& channel, const std::vector<config::UserConfig>& users,
                  const AuthenticationRequest& request);

}  // namespace tally::protocol
