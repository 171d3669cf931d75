#pragma once
// The seam between the wire protocol and SQL. protocol/ implements ResultWriter
// (it turns calls into v3 messages) and drives a QueryHandler per session;
// executor/ implements QueryHandler. Nothing here knows about sockets or SQL.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancel.hpp"
#include "common/error.hpp"

namespace tally {

enum class Format : int16_t { text = 0, binary = 1 };

// One column of a RowDescription.
struct FieldDescription {
  std::string name;
  uint32_t table_oid = 0;
  int16_t column_number = 0;
  uint32_t type_oid = 0;
  int16_t type_size = -1;
  int32_t type_modifier = -1;
  Format format = Format::text;
};

enum class TransactionStatus : char { idle = 'I', in_block = 'T', failed = 'E' };

// Source of COPY FROM STDIN data: the CopyData payloads as they arrive.
class CopyInReader {
 public:
  virtual ~CopyInReader() = default;
  // The next CopyData payload, or nullopt after CopyDone. Throws Error
  // (57014, "COPY from stdin failed: <message>") when the client sends CopyFail,
  // and Error(08P01) on a message that does not belong in COPY mode.
  virtual std::optional<std::string_view> next() = 0;
};

// Receives what one statement produces. Implemented by protocol/.
class ResultWriter {
 public:
  virtual ~ResultWriter() = default;
  // RowDescription. Inside Execute (extended protocol) the writer drops it,
  // since there Describe is what sends it; the executor always calls it.
  virtual void row_description(std::span<const FieldDescription> fields) = 0;
  // One DataRow. Each field is already encoded in its column's format
  // (text or binary); nullopt is SQL NULL.
  virtual void data_row(std::span<const std::optional<std::string_view>> fields) = 0;
  // CommandComplete with its tag ("SELECT 3", "INSERT 0 5", "CREATE TABLE").
  virtual void command_complete(std::string_view tag) = 0;
  // EmptyQueryResponse.
  virtual void empty_query() = 0;
  // NoticeResponse (severity taken from the Error: warning, notice, ...).
  virtual void notice(const Error& notice) = 0;
  // ParameterStatus, for reported settings changed by SET/RESET.
  virtual void parameter_status(std::string_view name, std::string_view value) = 0;
  // COPY FROM STDIN: sends CopyInResponse; the returned reader yields the data.
  virtual CopyInReader& copy_in(Format format, int column_count) = 0;
  // COPY TO STDOUT: CopyOutResponse, CopyData..., CopyDone.
  virtual void copy_out_begin(Format format, int column_count) = 0;
  virtual void copy_out_data(std::string_view bytes) = 0;
  virtual void copy_out_end() = 0;
  // Optional fast path for large results: the buffer that complete DataRow
  // messages, framed as on the wire ('D', int32 length, int16 field count,
  // fields), may be appended to directly. nullptr (the default) means the
  // caller must use data_row(). After appending rows, call
  // data_rows_appended() so that the writer can send what has accumulated
  // (the buffer may be emptied then; re-read its size before appending more).
  virtual std::string* data_row_buffer() { return nullptr; }
  virtual void data_rows_appended() {}
  // What a statement's result came from (an aggregation engine's run) and
  // whose release can wait: the writer keeps it until the reply's
  // ReadyForQuery is on the wire, so that its destructor is not on the path
  // to the client's rows. Holds one at a time: a later call releases the one
  // held before. The default releases it at once.
  virtual void release_after_reply(std::shared_ptr<void> held) { held.reset(); }
  // With data_row_buffer: complete DataRow messages encoded elsewhere (by a
  // helper thread, into its own buffer), to be sent after what the buffer
  // holds. The default appends them to the buffer; a writer may instead send
  // them as they are (no copy).
  virtual void data_rows_encoded(std::string_view messages) {
    data_row_buffer()->append(messages);
    data_rows_appended();
  }
};

// A parameter value from Bind: raw bytes in the given format, nullopt = NULL.
struct ParameterValue {
  std::optional<std::string> bytes;
  Format format = Format::text;
};

// The result of Parse: a statement with its parameter types resolved.
class PreparedStatement {
 public:
  virtual ~PreparedStatement() = default;
  // Parameter type OIDs (those given in Parse, the rest inferred).
  virtual std::vector<uint32_t> parameter_types() const = 0;
  // Result columns in text format; nullopt when the statement returns no rows
  // (Describe answers NoData).
  virtual std::optional<std::vector<FieldDescription>> result_fields() const = 0;
};

// The result of Bind: a statement with parameters, ready to run or resume.
class Portal {
 public:
  virtual ~Portal() = default;
  // Result columns with the formats requested in Bind; nullopt = NoData.
  virtual std::optional<std::vector<FieldDescription>> result_fields() const = 0;
  // Runs the portal, or resumes it where the last call stopped. Sends at most
  // max_rows DataRows (0 = no limit). Returns true when the statement finished
  // (CommandComplete was written, or empty_query() for an empty statement, as
  // PostgreSQL answers EmptyQueryResponse there) and false when it stopped at
  // the limit (the protocol answers PortalSuspended).
  virtual bool execute(uint64_t max_rows, ResultWriter& out) = 0;
};

// The session's named prepared statements. The protocol keeps them (Parse,
// Close); SQL's PREPARE, EXECUTE and DEALLOCATE reach the same ones through
// this, since PostgreSQL has one namespace for both (psqlODBC parses a
// statement and later sends DEALLOCATE for it).
class PreparedStatementRegistry {
 public:
  virtual ~PreparedStatementRegistry() = default;
  // The statement of that name, or nullptr.
  virtual std::shared_ptr<PreparedStatement> lookup(const std::string& name) = 0;
  // Adds it; false (nothing changed) when the name is taken.
  virtual bool add(const std::string& name, std::shared_ptr<PreparedStatement> statement) = 0;
  // Removes it; false when there is none of that name.
  virtual bool remove(const std::string& name) = 0;
  // Removes every named statement (DEALLOCATE ALL, DISCARD ALL); the unnamed
  // one stays, as in PostgreSQL.
  virtual void remove_all() = 0;
};

// Who is connected, as established by startup and authentication.
struct SessionInfo {
  std::string user;
  std::string database;
  std::map<std::string, std::string> startup_parameters;  // as the client sent them
  int32_t process_id = 0;
  CancelToken* cancel = nullptr;  // owned by the session, outlives the handler
  PreparedStatementRegistry* prepared = nullptr;  // likewise; null: no named statements
};

// SQL behaviour of one session. Implemented by executor/.
class QueryHandler {
 public:
  virtual ~QueryHandler() = default;
  // ParameterStatus pairs to send after authentication (server_version, ...).
  virtual std::vector<std::pair<std::string, std::string>> initial_parameter_status() = 0;
  // Runs every statement of a Simple Query message in order, writing each
  // statement's results; the empty string gives empty_query(). Throws Error
  // for the first failing statement (earlier ones have completed).
  virtual void simple_query(std::string_view sql, ResultWriter& out) = 0;
  // Parse. param_types may be shorter than the statement needs; 0 = infer.
  virtual std::unique_ptr<PreparedStatement> prepare(std::string_view sql,
                                                     std::span<const uint32_t> param_types) = 0;
  // Bind. result_formats follows the protocol: empty = all text, one = all alike.
  virtual std::unique_ptr<Portal> bind(PreparedStatement& statement,
                                       std::span<const ParameterValue> parameters,
                                       std::span<const Format> result_formats) = 0;
  // Transaction state for ReadyForQuery.
  virtual TransactionStatus transaction_status() const = 0;
  // An error ended a statement; a transaction block becomes failed ('E').
  virtual void on_error() = 0;
  // Sync: ends the implicit transaction of an extended-protocol batch.
  virtual void sync() = 0;
  // The statement_timeout in force for the next statement (milliseconds,
  // 0 = none) when the handler tracks SET statement_timeout; nullopt = the
  // server default, Config::statement_timeout_ms. The protocol enforces it
  // through the session's CancelToken (57014 "canceling statement due to
  // statement timeout").
  virtual std::optional<uint64_t> statement_timeout_ms() const { return std::nullopt; }
};

// Creates the handler of a new session. Throws Error (3D000 and the like).
class QueryHandlerFactory {
 public:
  virtual ~QueryHandlerFactory() = default;
  virtual std::unique_ptr<QueryHandler> create(const SessionInfo& session) = 0;
};

}  // namespace tally
