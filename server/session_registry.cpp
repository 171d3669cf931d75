#include "server/session_registry.hpp"

#include <unistd.h>

#include "protocol/scram.hpp"

namespace tally::server {

protocol::BackendKey SessionRegistry::register_session(CancelToken& token) {
  // The secret must be unguessable (it authorizes cancelling); random bytes.
  std::string random = protocol::random_bytes(4);
  int32_t secret = static_cast<int32_t>((uint32_t(uint8_t(random[0])) << 24) |
                                        (uint32_t(uint8_t(random[1])) << 16) |
                                        (uint32_t(uint8_t(random[2])) << 8) |
                                        uint32_t(uint8_t(random[3])));
  std::lock_guard lock(mutex_);
  if (next_process_id_ == 0) {
    // Start near the real pid so ids from two servers on one host rarely collide in logs.
    next_process_id_ = static_cast<int32_t>(::getpid()) * 16;
  }
  int32_t pid = 0;
  do {
    pid = next_process_id_++;
    if (next_process_id_ <= 0) next_process_id_ = 1;  // stay positive, like real pids
  } while (pid <= 0 || sessions_.count(pid) > 0);
  sessions_[pid] = Entry{secret, &token};
  return protocol::BackendKey{pid, secret};
}

void SessionRegistry::unregister_session(const protocol::BackendKey& key) {
  std::lock_guard lock(mutex_);
  sessions_.erase(key.process_id);
}

void SessionRegistry::cancel(const protocol::BackendKey& key) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(key.process_id);
  if (it == sessions_.end() || it->second.secret_key != key.secret_key) return;
  // Never downgrade a pending shutdown to a plain cancel.
  if (it->second.token->reason() != CancelReason::shutdown) {
    it->second.token->request(CancelReason::user_request);
  }
}

bool SessionRegistry::too_many_connections() {
  return connections_.load() > max_connections_;
}

size_t SessionRegistry::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void SessionRegistry::cancel_all_for_shutdown() {
  std::lock_guard lock(mutex_);
  for (auto& [pid, entry] : sessions_) entry.token->request(CancelReason::shutdown);
}

}  // namespace tally::server
