// AdminRouter: routes, status codes, token checks; no sockets involved.
#include "server/admin_router.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/admin_tuning_page.hpp"
#include "tests/admin/sample_tuning.hpp"

namespace tally::server {
namespace {

AdminResponse get(const AdminRouter& r, const std::string& target, const std::string& auth = "") {
  return r.handle({"GET", target, auth});
}

TEST(AdminRouter, HealthReadyAndUnknownPaths) {
  bool ready = false;
  metrics::Registry registry;
  AdminRouter r("", {.ready = [&] { return ReadyState{ready, "catalog not open"}; },
                     .tuning_json = nullptr, .registry = &registry});
  EXPECT_EQ(get(r, "/health").status, 200);
  auto not_ready = get(r, "/ready");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(nlohmann::json::parse(not_ready.body)["reason"], "catalog not open");
  ready = true;
  EXPECT_EQ(get(r, "/ready").status, 200);
  EXPECT_EQ(get(r, "/nope").status, 404);
  EXPECT_EQ(get(r, "/metrics/").status, 200);
  auto post = r.handle({"POST", "/metrics", ""});
  EXPECT_EQ(post.status, 405);
  ASSERT_EQ(post.headers.size(), 1u);
  EXPECT_EQ(post.headers[0].first, "Allow");
}

TEST(AdminRouter, MetricsComeFromTheGivenRegistry) {
  metrics::Registry registry;
  registry.counter("t_only_here_total", "x").inc(3);
  AdminRouter r("", {.registry = &registry});
  auto res = get(r, "/metrics");
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.content_type.rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_NE(res.body.find("t_only_here_total 3\n"), std::string::npos);
}

TEST(AdminRouter, TheGlobalRegistryListsEveryNamedMetricFromTheStart) {
  AdminRouter r("", {});
  std::string body = get(r, "/metrics").body;
  for (const char* series : {"tally_connections_total ", "tally_connections_active ",
                             "tally_queries_total{outcome=\"timeout\"} ",
                             "tally_query_duration_seconds_count{engine=\"gpu\"} ",
                             "tally_rows_scanned_total ", "tally_bytes_scanned_total ",
                             "tally_aggregations_total{engine=\"gpu\"} ", "tally_gpu_memory_used_bytes ",
                             "tally_gpu_memory_total_bytes ", "tally_column_cache_hits_total ",
                             "tally_column_cache_hit_ratio ", "tally_tuner_explorations_total ",
                             "tally_tuning_cache_entries ", "tally_process_start_time_seconds "})
    EXPECT_NE(body.find(series), std::string::npos) << series;
}

TEST(AdminRouter, TokenProtectsEverythingButProbes) {
  metrics::Registry registry;
  AdminRouter r("s3cr3t", {.registry = &registry});
  EXPECT_TRUE(r.requires_token());
  EXPECT_EQ(get(r, "/health").status, 200);
  EXPECT_EQ(get(r, "/ready").status, 200);
  for (const char* path : {"/metrics", "/tuning", "/tuning/page", "/"}) {
    EXPECT_EQ(get(r, path).status, 401) << path;
    EXPECT_EQ(get(r, path, "Bearer wrong").status, 401) << path;
    EXPECT_EQ(get(r, path, "Bearer s3cr3").status, 401) << path;
    EXPECT_EQ(get(r, path, "Basic s3cr3t").status, 401) << path;
    EXPECT_EQ(get(r, path, "Bearer s3cr3t").status, 200) << path;
    EXPECT_EQ(get(r, path, "bearer s3cr3t").status, 200) << path;
    EXPECT_EQ(get(r, std::string(path) + "?a=1&token=s3cr3t").status, 200) << path;
    EXPECT_EQ(get(r, std::string(path) + "?token=s3cr3").status, 401) << path;
  }
  r.set_token("new%token");
  EXPECT_EQ(get(r, "/metrics?token=new%25token").status, 200);
  EXPECT_EQ(get(r, "/metrics", "Bearer s3cr3t").status, 401);
  auto denied = get(r, "/metrics");
  EXPECT_EQ(denied.body.find("new"), std::string::npos) << "never echoes the token";
}

TEST(AdminRouter, TuningJsonAndPage) {
  std::string json = testing_admin::sample_tuning().dump();
  AdminRouter r("", {.tuning_json = [&] { return json; }});
  auto res = get(r, "/tuning");
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(res.body), testing_admin::sample_tuning());

  auto page = get(r, "/tuning/page");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  // The device name contains "</script>": embedded, it must stay inside the JSON.
  EXPECT_EQ(page.body.find("Sample GPU </script>"), std::string::npos);
  EXPECT_NE(page.body.find("Sample GPU \\u003c/script>"), std::string::npos);
  EXPECT_EQ(page.body.find("http://"), page.body.find("http://www.w3.org/2000/svg"))
      << "no external resources";
  EXPECT_EQ(page.body.find("https://"), std::string::npos);
  EXPECT_EQ(get(r, "/").body, page.body);
  bool has_csp = false;
  for (auto& [k, v] : page.headers) has_csp = has_csp || (k == "Content-Security-Policy" && v.find("default-src 'none'") != std::string::npos);
  EXPECT_TRUE(has_csp);
}

TEST(AdminRouter, TuningFailuresAndAbsence) {
  AdminRouter failing("", {.tuning_json = []() -> std::string { throw std::runtime_error("db locked"); }});
  auto res = get(failing, "/tuning");
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(res.body.find("db locked"), std::string::npos) << "internal detail goes to the log";
  AdminRouter absent("", {});
  EXPECT_EQ(nlohmann::json::parse(get(absent, "/tuning").body)["entries"].size(), 0u);
}

TEST(AdminRouter, QueryParameters) {
  EXPECT_EQ(query_parameter("a=1&token=x%20y&b", "token"), "x y");
  EXPECT_EQ(query_parameter("token=a+b", "token"), "a b");
  EXPECT_EQ(query_parameter("tokens=1", "token"), "");
  EXPECT_EQ(query_parameter("", "token"), "");
  EXPECT_EQ(url_decode("%4"), "%4");
  EXPECT_EQ(url_decode("%zz%41"), "%zzA");
}

}  // namespace
}  // namespace tally::server
