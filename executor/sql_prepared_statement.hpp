#pragma once
// What Parse (and SQL's PREPARE) makes: an analyzed statement, shared with
// the portals bound from it.
#include <memory>
#include <optional>
#include <vector>

#include "common/query_handler.hpp"
#include "executor/analyzed_statement.hpp"

namespace tally::executor {

class SqlPreparedStatement final : public tally::PreparedStatement {
 public:
  explicit SqlPreparedStatement(std::shared_ptr<const AnalyzedStatement> analyzed)
      : analyzed(std::move(analyzed)) {}
  std::vector<uint32_t> parameter_types() const override { return analyzed->parameter_types; }
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override {
    return analyzed->fields;
  }
  std::shared_ptr<const AnalyzedStatement> analyzed;
};

}  // namespace tally::executor
