// Loads the admin endpoint's tuning page in headless Chromium (Debian's
// `chromium`), checks the DOM its script rendered (heat-map cells, the tuner's
// path, the best configuration, escaping) and keeps a screenshot in the
// repository's git-ignored tests/artifacts/tuning_page.png. Chromium is part of
// scripts/setup.sh; without it this test fails rather than skipping.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "server/admin_server.hpp"
#include "tests/admin/sample_tuning.hpp"

namespace tally::server {
namespace {

namespace fs = std::filesystem;

// Bounds every Chromium run; a first start on a cold machine takes seconds.
constexpr int chromium_timeout_seconds = 120;

std::string chromium_binary() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(candidate)) return candidate;
  return "";
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

RunResult run(const std::string& command) {
  RunResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class TuningPageInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = chromium_binary();
    ASSERT_FALSE(chromium_.empty()) << "chromium is not installed: run scripts/setup.sh";
    std::random_device rd;
    profile_ = fs::temp_directory_path() / ("tally-chromium-" + std::to_string(rd()));
    fs::create_directories(profile_);
    server_ = std::make_unique<AdminServer>(
        "127.0.0.1", 0, "page-token",
        AdminCallbacks{.ready = nullptr, .tuning_json = [this] { return tuning_json_; }, .registry = nullptr});
    server_->start();
  }
  void TearDown() override {
    if (server_) server_->stop();
    std::error_code ec;
    fs::remove_all(profile_, ec);
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + "/tuning/page?token=page-token";
  }
  std::string chromium(const std::string& action) const {
    return "timeout -k 5 " + std::to_string(chromium_timeout_seconds) + " " + chromium_ +
           " --headless --no-sandbox --disable-gpu --disable-background-networking"
           " --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage"
           " --user-data-dir=" + profile_.string() + " " + action + " '" + url() + "' 2>/dev/null";
  }
  std::string dump_dom() const {
    RunResult r = run(chromium("--dump-dom"));
    EXPECT_EQ(r.exit_code, 0) << "chromium --dump-dom failed";
    return r.out;
  }

  std::string chromium_;
  fs::path profile_;
  std::string tuning_json_;
  std::unique_ptr<AdminServer> server_;
};

size_t count(const std::string& text, const std::regex& re) {
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

TEST_F(TuningPageInChromium, RendersHeatMapsAndSearchPaths) {
  tuning_json_ = testing_admin::sample_tuning().dump();
  std::string dom = dump_dom();
  ASSERT_NE(dom.find("data-rendered=\"3\""), std::string::npos) << "the page script did not run:\n"
                                                                 << dom.substr(0, 2000);
  auto entries = testing_admin::sample_entries();
  // One heat map per entry, in order; each with its measured cells and path.
  std::regex figure_re(R"re(<figure class="heatmap" id="map-(\d+)"[^>]*>([\s\S]*?)</figure>)re");
  size_t i = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), figure_re); it != std::sregex_iterator(); ++it, ++i) {
    ASSERT_LT(i, entries.size());
    const std::string map = (*it)[2];
    const auto& e = entries[i];
    auto steps = testing_admin::descent_path(e);
    SCOPED_TRACE(e.variant);
    EXPECT_EQ(count(map, std::regex(R"re(<rect [^>]*class="cell")re")), testing_admin::measured_cells(e));
    EXPECT_EQ(count(map, std::regex(R"re(<rect [^>]*class="cell empty")re")),
              testing_admin::grid_area(e) - testing_admin::measured_cells(e));
    EXPECT_EQ(count(map, std::regex(R"re(<polyline [^>]*class="tuner-path")re")), 1u);
    std::smatch steps_attr;
    ASSERT_TRUE(std::regex_search(map, steps_attr, std::regex(R"re(data-steps="(\d+)")re")));
    EXPECT_EQ(std::stoul(steps_attr[1]), steps.size());
    EXPECT_EQ(count(map, std::regex(R"re(<circle [^>]*class="path-step)re")), steps.size());
    EXPECT_EQ(count(map, std::regex(R"re(class="path-step path-start)re")), 1u);
    // The best frame sits on the path's last configuration.
    std::smatch best;
    ASSERT_TRUE(std::regex_search(map, best, std::regex(R"re(<rect class="best"[^>]*data-tpb="(\d+)" data-bps="(\d+)")re")));
    EXPECT_EQ(std::stoi(best[1]), steps.back().first);
    EXPECT_EQ(std::stoi(best[2]), steps.back().second);
    // The fastest cell is labelled with the best time (cells of slower fill
    // factors do not hide it).
    char expected_ns[32];
    std::snprintf(expected_ns, sizeof expected_ns, "%.3f",
                  testing_admin::sample_time(steps.back().first, steps.back().second, e.best_tpb, e.best_bps) * 1e9);
    std::regex best_cell("data-tpb=\"" + std::to_string(steps.back().first) + "\" data-bps=\"" +
                         std::to_string(steps.back().second) + "\" class=\"cell\" fill=\"[^\"]+\" data-ns-per-row=\"" +
                         expected_ns + "\"");
    EXPECT_EQ(count(map, best_cell), 1u) << expected_ns;
  }
  EXPECT_EQ(i, entries.size());
  EXPECT_EQ(count(dom, std::regex(R"re(<tr class="entry")re")), entries.size());
  // The device name held "</script><b>x</b>": shown as text, never as markup.
  EXPECT_NE(dom.find("Sample GPU &lt;/script&gt;&lt;b&gt;x&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(dom.find("<b>x</b>"), std::string::npos);
}

TEST_F(TuningPageInChromium, ReadsTheTuningCachesBareArray) {
  auto entries = testing_admin::sample_entries();
  nlohmann::json array = nlohmann::json::array();
  for (auto e : entries) {
    e.cache_format = true;
    array.push_back(testing_admin::sample_entry(e));
  }
  tuning_json_ = array.dump();
  std::string dom = dump_dom();
  ASSERT_NE(dom.find("data-rendered=\"3\""), std::string::npos) << dom.substr(0, 2000);
  size_t cells = 0, steps = 0;
  for (auto& e : entries) {
    cells += testing_admin::measured_cells(e);
    steps += testing_admin::descent_path(e).size();
  }
  EXPECT_EQ(count(dom, std::regex(R"re(<rect [^>]*class="cell")re")), cells);
  EXPECT_EQ(count(dom, std::regex(R"re(class="path-step[^"]*event-better)re")), steps - entries.size());
  EXPECT_NE(dom.find("Sample GPU|sm_90|132"), std::string::npos);
  EXPECT_NE(dom.find("keys=int4;width=4;aggs=count,sum(int8)"), std::string::npos);
}

TEST_F(TuningPageInChromium, EmptyCacheSaysSo) {
  tuning_json_ = "{\"device\":null,\"entries\":[]}";
  std::string dom = dump_dom();
  ASSERT_NE(dom.find("data-rendered=\"0\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(dom.find("<figure"), std::string::npos);
  std::smatch empty;
  ASSERT_TRUE(std::regex_search(dom, empty, std::regex(R"re(<p id="empty"([^>]*)>)re")));
  EXPECT_EQ(std::string(empty[1]).find("hidden"), std::string::npos);
}

TEST_F(TuningPageInChromium, KeepsAScreenshot) {
  tuning_json_ = testing_admin::sample_tuning().dump();
  fs::path dir = TALLY_ARTIFACTS_DIR;
  fs::create_directories(dir);
  fs::path png = dir / "tuning_page.png";
  fs::remove(png);
  RunResult r = run(chromium("--hide-scrollbars --window-size=1400,1500 --screenshot=" + png.string()));
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_TRUE(fs::exists(png)) << png;
  std::ifstream in(png, std::ios::binary);
  unsigned char header[24] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  EXPECT_EQ(std::memcmp(header, signature, 8), 0) << "not a PNG";
  uint32_t width = (header[16] << 24) | (header[17] << 16) | (header[18] << 8) | header[19];
  uint32_t height = (header[20] << 24) | (header[21] << 16) | (header[22] << 8) | header[23];
  EXPECT_EQ(width, 1400u);
  EXPECT_EQ(height, 1500u);
  // A blank page compresses to almost nothing; a rendered one does not.
  EXPECT_GT(fs::file_size(png), 20000u);
}

}  // namespace
}  // namespace tally::server
