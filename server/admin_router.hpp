#pragma once
// What the HTTP admin endpoint answers, independent of sockets (the Beast
// server in admin_server.hpp only moves bytes). Routes:
//   GET /health        200 while the process runs
//   GET /ready         200 when the ready callback says so, else 503 with the reason
//   GET /metrics       Prometheus text exposition of a metrics::Registry
//   GET /tuning        the tuning cache as JSON (the tuning_json callback)
//   GET /tuning/page   HTML heat maps of the tuning cache (also GET /)
// With a token configured, every route except /health and /ready needs
// "Authorization: Bearer <token>" or "?token=<token>"; probes stay simple and
// those two routes reveal nothing. No route returns passwords or table data.
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "server/metrics.hpp"

namespace tally::server {

struct ReadyState {
  bool ready = false;
  std::string reason;  // why not ready ("catalog not open"), shown in the 503 body
};

struct AdminCallbacks {
  // Null: ready as soon as the endpoint runs.
  std::function<ReadyState()> ready = nullptr;
  // The tuning cache as JSON (schema in server/admin_tuning_page.hpp). Null:
  // an empty cache. May throw; the endpoint answers 500 then.
  std::function<std::string()> tuning_json = nullptr;
  // Null: metrics::global().
  metrics::Registry* registry = nullptr;
};

struct AdminRequest {
  std::string method;         // "GET"
  std::string target;         // "/metrics?token=x"
  std::string authorization;  // the Authorization header, may be empty
};

struct AdminResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

class AdminRouter {
 public:
  AdminRouter(std::string token, AdminCallbacks callbacks);
  AdminResponse handle(const AdminRequest& request) const;
  // SIGHUP may change the token.
  void set_token(std::string token);
  bool requires_token() const;

 private:
  bool authorized(const AdminRequest& request, const std::string& query) const;

  mutable std::mutex token_mutex_;
  std::string token_;
  AdminCallbacks callbacks_;
};

// "%41b+c" -> "Ab c" (application/x-www-form-urlencoded value decoding).
std::string url_decode(std::string_view text);
// The value of `name` in a query string "a=1&token=x", or empty.
std::string query_parameter(std::string_view query, std::string_view name);

}  // namespace tally::server
