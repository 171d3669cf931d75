#pragma once
// protocol/'s side of the seam: turns ResultWriter calls into v3 messages on
// a MessageChannel, and reads COPY FROM STDIN data for the executor.
#include <memory>
#include <string>

#include "common/statement_timeline.hpp"
#include "protocol/message_channel.hpp"
#include "common/query_handler.hpp"

namespace tally::protocol {

class WireCopyInReader : public CopyInReader {
 public:
  explicit WireCopyInReader(MessageChannel& channel) : channel_(channel) {}
  void start() { finished_ = false; }
  std::optional<std::string_view> next() override;

 private:
  MessageChannel& channel_;
  std::string body_;
  bool finished_ = true;
};

class WireResultWriter : public ResultWriter {
 public:
  explicit WireResultWriter(MessageChannel& channel) : channel_(channel), copy_in_(channel) {}

  // Inside Execute, RowDescription is Describe's job and is dropped here.
  void set_in_execute(bool in_execute) { in_execute_ = in_execute; }

  void row_description(std::span<const FieldDescription> fields) override;
  void data_row(std::span<const std::optional<std::string_view>> fields) override;
  void command_complete(std::string_view tag) override;
  void empty_query() override;
  void notice(const Error& notice) override;
  void parameter_status(std::string_view name, std::string_view value) override;
  CopyInReader& copy_in(Format format, int column_count) override;
  void copy_out_begin(Format format, int column_count) override;
  void copy_out_data(std::string_view bytes) override;
  void copy_out_end() override;
  // DataRows are encoded by the executor straight into the channel's output.
  std::string* data_row_buffer() override { return &channel_.out(); }
  void data_rows_appended() override {
    statement_timeline().row_buffered();
    channel_.flush_if_large();
  }
  void release_after_reply(std::shared_ptr<void> held) override { held_ = std::move(held); }
  // Called once ReadyForQuery was flushed (and when the session ends).
  void release_held() { held_.reset(); }
  // What the channel holds goes first, then the messages, straight from the
  // encoder's buffer.
  void data_rows_encoded(std::string_view messages) override {
    channel_.flush();
    channel_.stream().write_all(messages);
    StatementTimeline& timeline = statement_timeline();
    timeline.row_buffered();
    timeline.flushed();
  }

 private:
  MessageChannel& channel_;
  WireCopyInReader copy_in_;
  bool in_execute_ = false;
  std::shared_ptr<void> held_;  // release_after_reply
};

}  // namespace tally::protocol
