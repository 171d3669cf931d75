#pragma once
// A ResultWriter that records what a statement produced, as text lines, for
// tests of the session and the SQL runner.
#include <string>
#include <vector>

#include "common/query_handler.hpp"

namespace tally::executor::testing {

class RecordingWriter final : public tally::ResultWriter {
 public:
  struct Result {
    std::vector<tally::FieldDescription> fields;
    std::vector<std::vector<std::optional<std::string>>> rows;
    std::string tag;
  };
  std::vector<Result> results;
  std::vector<std::pair<std::string, std::string>> parameter_changes;
  std::vector<std::string> notices;
  bool empty = false;

  void row_description(std::span<const tally::FieldDescription> fields) override {
    current().fields.assign(fields.begin(), fields.end());
  }
  void data_row(std::span<const std::optional<std::string_view>> fields) override {
    std::vector<std::optional<std::string>> row;
    for (const auto& f : fields) row.push_back(f ? std::optional<std::string>(std::string(*f)) : std::nullopt);
    current().rows.push_back(std::move(row));
  }
  void command_complete(std::string_view tag) override {
    current().tag = std::string(tag);
    open_ = false;
  }
  void empty_query() override { empty = true; }
  void notice(const Error& notice) override { notices.push_back(std::string(sqlstate_code(notice.state())) + " " + notice.what()); }
  void parameter_status(std::string_view name, std::string_view value) override {
    parameter_changes.emplace_back(std::string(name), std::string(value));
  }
  tally::CopyInReader& copy_in(tally::Format, int) override { throw Error(SqlState::feature_not_supported, "no COPY in tests"); }
  void copy_out_begin(tally::Format, int) override {}
  void copy_out_data(std::string_view) override {}
  void copy_out_end() override {}

  // Rows of the last result as "a|b|NULL" lines.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    if (results.empty()) return out;
    for (const auto& row : results.back().rows) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) line += "|";
        line += row[i] ? *row[i] : "NULL";
      }
      out.push_back(line);
    }
    return out;
  }

 private:
  Result& current() {
    if (!open_) { results.emplace_back(); open_ = true; }
    return results.back();
  }
  bool open_ = false;
};

}  // namespace tally::executor::testing
