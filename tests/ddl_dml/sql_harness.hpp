#pragma once
// Runs SQL statements in-process through the parser and the DDL/DML entry
// points, with a ResultWriter that records notices and COPY output and feeds
// COPY FROM STDIN data. Used by the DDL/DML tests and the crash-test driver.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/dml/dml.hpp"
#include "executor/parser.hpp"
#include "storage/table_store.hpp"

namespace tally::testing {

class RecordingWriter final : public tally::ResultWriter, public tally::CopyInReader {
 public:
  std::vector<std::string> notices;
  std::string copy_out;
  std::vector<std::string> copy_in_blocks;  // fed to COPY FROM STDIN
  size_t next_block = 0;
  bool copy_in_started = false;

  void row_description(std::span<const tally::FieldDescription>) override {}
  void data_row(std::span<const std::optional<std::string_view>>) override {}
  void command_complete(std::string_view) override {}
  void empty_query() override {}
  void notice(const Error& n) override { notices.push_back(std::string(sqlstate_code(n.state())) + " " + n.what()); }
  void parameter_status(std::string_view, std::string_view) override {}
  tally::CopyInReader& copy_in(tally::Format, int) override {
    copy_in_started = true;
    return *this;
  }
  void copy_out_begin(tally::Format, int) override { copy_out.clear(); }
  void copy_out_data(std::string_view bytes) override { copy_out.append(bytes); }
  void copy_out_end() override {}
  std::optional<std::string_view> next() override {
    if (next_block >= copy_in_blocks.size()) return std::nullopt;
    return copy_in_blocks[next_block++];
  }
};

class SqlHarness {
 public:
  explicit SqlHarness(std::string data_dir, uint32_t chunk_rows = 1u << 20) : dir_(std::move(data_dir)) {
    open(chunk_rows);
  }
  void open(uint32_t chunk_rows = 1u << 20) {
    store_.reset();
    catalog_.reset();
    catalog_ = std::make_unique<catalog::Catalog>(dir_);
    storage::StoreOptions o;
    o.chunk_rows = chunk_rows;
    store_ = std::make_unique<storage::TableStore>(*catalog_, o);
    recovered_ = store_->recover();
  }
  // Files/directories the last open's recovery removed.
  size_t recovered() const { return recovered_; }
  storage::TableStore& store() { return *store_; }
  catalog::Catalog& catalog() { return *catalog_; }

  // Runs every statement of sql; returns the last command tag. copy_data is
  // fed (in blocks of block_size bytes) to COPY FROM STDIN.
  std::string run(const std::string& sql, const std::string& copy_data = "", size_t block_size = 1 << 16) {
    writer_ = RecordingWriter();
    for (size_t i = 0; i < copy_data.size(); i += block_size)
      writer_.copy_in_blocks.push_back(copy_data.substr(i, block_size));
    std::string tag;
    for (const auto& st : executor::parse_sql(sql)) {
      executor::StatementContext ctx{*store_, writer_, sql, nullptr};
      const std::string& type = st.type();
      if (type == "CreateStmt") tag = executor::ddl::create_table(st.body(), ctx);
      else if (type == "DropStmt") tag = executor::ddl::drop(st.body(), ctx);
      else if (type == "TruncateStmt") tag = executor::ddl::truncate(st.body(), ctx);
      else if (type == "InsertStmt") tag = executor::dml::insert(st.body(), ctx);
      else if (type == "CopyStmt") tag = executor::dml::copy(st.body(), ctx);
      else throw Error(SqlState::feature_not_supported, "harness: " + type);
    }
    return tag;
  }
  const RecordingWriter& writer() const { return writer_; }

  // The table's rows as COPY text lines (the text format PostgreSQL prints).
  std::string dump(const std::string& table) {
    run("COPY " + table + " TO STDOUT");
    return writer_.copy_out;
  }

 private:
  std::string dir_;
  size_t recovered_ = 0;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<storage::TableStore> store_;
  RecordingWriter writer_;
};

}  // namespace tally::testing
