#pragma once
// A ResultWriter that drops everything: benchmarks that time the executor
// without a client, and tests that override only the calls they check.
#include "common/error.hpp"
#include "common/query_handler.hpp"

namespace tally::protocol {

class DiscardingResultWriter : public ResultWriter {
 public:
  void row_description(std::span<const FieldDescription>) override {}
  void data_row(std::span<const std::optional<std::string_view>>) override {}
  void command_complete(std::string_view) override {}
  void empty_query() override {}
  void notice(const Error&) override {}
  void parameter_status(std::string_view, std::string_view) override {}
  // No client to read COPY FROM STDIN data from.
  CopyInReader& copy_in(Format, int) override {
    throw Error(SqlState::feature_not_supported, "COPY FROM STDIN needs a client");
  }
  void copy_out_begin(Format, int) override {}
  void copy_out_data(std::string_view) override {}
  void copy_out_end() override {}
};

}  // namespace tally::protocol
