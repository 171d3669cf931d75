#include "server/admin_router.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "common/log.hpp"
#include "server/admin_tuning_page.hpp"

namespace tally::server {
namespace {

AdminResponse json_response(int status, std::string body) {
  return AdminResponse{status, "application/json", std::move(body), {}};
}

std::string json_escape(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') { out += '\\'; out += char(c); }
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += char(c);
  }
  return out;
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string url_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() &&
               std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += char(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string query_parameter(std::string_view query, std::string_view name) {
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view pair = query.substr(start, amp - start);
    size_t eq = pair.find('=');
    if (url_decode(pair.substr(0, eq)) == name)
      return eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1));
    start = amp + 1;
  }
  return "";
}

AdminRouter::AdminRouter(std::string token, AdminCallbacks callbacks)
    : token_(std::move(token)), callbacks_(std::move(callbacks)) {
  if (!callbacks_.registry) {
    callbacks_.registry = &metrics::global();
    metrics::register_named_metrics();
  }
}

void AdminRouter::set_token(std::string token) {
  std::lock_guard lock(token_mutex_);
  token_ = std::move(token);
}

bool AdminRouter::requires_token() const {
  std::lock_guard lock(token_mutex_);
  return !token_.empty();
}

bool AdminRouter::authorized(const AdminRequest& request, const std::string& query) const {
  std::lock_guard lock(token_mutex_);
  if (token_.empty()) return true;
  constexpr std::string_view bearer = "Bearer ";
  if (request.authorization.size() > bearer.size() &&
      std::equal(bearer.begin(), bearer.end(), request.authorization.begin(),
                 [](char a, char b) { return std::tolower(a) == std::tolower(b); }) &&
      constant_time_equal(request.authorization.substr(bearer.size()), token_))
    return true;
  std::string given = query_parameter(query, "token");
  return !given.empty() && constant_time_equal(given, token_);
}

AdminResponse AdminRouter::handle(const AdminRequest& request) const {
  size_t q = request.target.find('?');
  std::string path = request.target.substr(0, q);
  std::string query = q == std::string::npos ? "" : request.target.substr(q + 1);
  if (path.size() > 1 && path.back() == '/') path.pop_back();

  bool known = path == "/" || path == "/health" || path == "/ready" || path == "/metrics" ||
               path == "/tuning" || path == "/tuning/page";
  if (!known) return json_response(404, "{\"error\":\"not found\"}\n");
  if (request.method != "GET" && request.method != "HEAD") {
    AdminResponse r = json_response(405, "{\"error\":\"method not allowed\"}\n");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }

  if (path == "/health") return json_response(200, "{\"status\":\"up\"}\n");
  if (path == "/ready") {
    ReadyState state = callbacks_.ready ? callbacks_.ready() : ReadyState{true, ""};
    if (state.ready) return json_response(200, "{\"ready\":true}\n");
    return json_response(503, "{\"ready\":false,\"reason\":\"" + json_escape(state.reason) + "\"}\n");
  }

  if (!authorized(request, query)) {
    AdminResponse r = json_response(401, "{\"error\":\"a valid token is required\"}\n");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tally\"");
    return r;
  }

  if (path == "/metrics")
    return AdminResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                         callbacks_.registry->exposition(), {}};

  std::string tuning;
  try {
    tuning = callbacks_.tuning_json ? callbacks_.tuning_json() : empty_tuning_json();
  } catch (const std::exception& e) {
    log::error("admin_tuning_failed", {{"error", e.what()}});
    return json_response(500, "{\"error\":\"the tuning cache could not be read\"}\n");
  }
  if (path == "/tuning") return json_response(200, tuning + "\n");
  AdminResponse page{200, "text/html; charset=utf-8", tuning_page_html(tuning), {}};
  // The page is self-contained: forbid anything it does not need.
  page.headers.emplace_back("Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; "
                            "style-src 'unsafe-inline'; connect-src 'self'; img-src data:");
  page.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return page;
}

}  // namespace tally::server
