#pragma once
// One client connection's protocol state machine, with PostgreSQL's
// PostgresMain semantics: startup (SSL/GSSENC negotiation, CancelRequest,
// StartupMessage), authentication, then the message loop for simple and
// extended query, COPY and Terminate. It runs over an abstract ByteStream, so
// tests drive it with scripted bytes and the server with a socket.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/cancel.hpp"
#include "config/config.hpp"
#include "protocol/byte_stream.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_channel.hpp"
#include "protocol/named_slots.hpp"
#include "common/query_handler.hpp"
#include "protocol/session_host.hpp"
#include "protocol/wire_result_writer.hpp"

namespace tally::protocol {

class ProtocolSession {
 public:
  enum class State {
    startup,         // before a StartupMessage was accepted
    authenticating,  // running the configured method's exchange
    ready,           // idle, waiting for a message
    in_query,        // running a statement (simple or extended)
    awaiting_sync,   // an extended-protocol error: skip everything until Sync
    closed,          // Terminate, a FATAL error, or the peer went away
  };

  ProtocolSession(const config::Config& config, QueryHandlerFactory& factory, SessionHost& host,
          ByteStream& stream);
  ~ProtocolSession();
  ProtocolSession(const ProtocolSession&) = delete;
  ProtocolSession& operator=(const ProtocolSession&) = delete;

  // Serves the connection until it ends. Never throws.
  void run();

  // Readable from other threads (the server's vanished-client watchdog).
  State state() const { return state_.load(std::memory_order_relaxed); }
  // Set by CancelRequest (through the host) and by server shutdown.
  CancelToken& cancel_token() { return cancel_; }

 private:
  struct PortalEntry {
    std::shared_ptr<PreparedStatement> statement;  // kept alive while the portal exists
    std::unique_ptr<Portal> portal;
    std::string sql;  // the statement's text, for pg_stat_activity
  };

  // Startup and authentication; false when the connection ends without a
  // session (CancelRequest, peer gone).
  bool start();
  void serve();
  void dispatch(char type, const std::string& body);
  void send_fatal(const Error& error);

  void simple_query(const frontend::Query& m);
  void parse(frontend::Parse& m);
  void bind(frontend::Bind& m);  // moves the parameter values out of m
  void describe(const frontend::Describe& m);
  void execute(const frontend::Execute& m);
  void close(const frontend::Close& m);
  void sync();
  void ready_for_query();
  // Portals do not outlive the transaction that created them.
  void drop_portals_if_idle();
  // After a ReadyForQuery: hands the statement's timeline, if kept, to the host.
  void report_timeline();
  // Resets the cancel token for a new statement, keeping a pending shutdown,
  // and arms statement_timeout.
  void begin_statement();
  // Disarms statement_timeout once a message has been handled.
  void end_statement();

  const config::Config& config_;
  QueryHandlerFactory& factory_;
  SessionHost& host_;
  MessageChannel channel_;
  WireResultWriter writer_;
  CancelToken cancel_;
  std::atomic<State> state_{State::startup};
  std::optional<BackendKey> key_;
  SessionInfo info_;
  bool doing_extended_ = false;  // the current message belongs to the extended protocol
  bool deadline_armed_ = false;
  // statement_timeout as the handler last reported it (begin_statement);
  // forgotten after each message that may have changed it.
  bool timeout_known_ = false;
  uint64_t timeout_ms_ = 0;
  // Declared before the statements and portals so that they die first.
  std::unique_ptr<QueryHandler> handler_;
  PreparedStatementSlots statements_;
  // The text of each statement a Parse made (pg_stat_activity's query while
  // a portal of it executes); a statement that SQL PREPARE made has none.
  NamedSlots<std::string> statement_texts_;
  NamedSlots<PortalEntry> portals_;
};

}  // namespace tally::protocol
