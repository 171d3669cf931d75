#include "protocol/protocol_session.hpp"

#include <algorithm>
#include <new>

#include "protocol/authenticator.hpp"
#include "protocol/backend_messages.hpp"
#include "protocol/error_encoding.hpp"
#include "protocol/message_buffer.hpp"
#include "common/statement_timeline.hpp"

namespace tally::protocol {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

std::string quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

Error statement_missing(const std::string& name) {
  return Error(SqlState::invalid_sql_statement_name,
               name.empty() ? "unnamed prepared statement does not exist"
                            : "prepared statement " + quoted(name) + " does not exist");
}

Error portal_missing(const std::string& name) {
  return Error(SqlState::invalid_cursor_name, "portal " + quoted(name) + " does not exist");
}

std::vector<Format> checked_formats(const std::vector<int16_t>& codes) {
  std::vector<Format> formats;
  formats.reserve(codes.size());
  for (int16_t code : codes) {
    if (code != 0 && code != 1) {
      throw Error(SqlState::invalid_parameter_value,
                  "unsupported format code: " + std::to_string(code));
    }
    formats.push_back(static_cast<Format>(code));
  }
  return formats;
}

}  // namespace

ProtocolSession::ProtocolSession(const config::Config& config, QueryHandlerFactory& factory, SessionHost& host,
                 ByteStream& stream)
    : config_(config),
      factory_(factory),
      host_(host),
      channel_(stream, config.max_message_bytes),
      writer_(channel_) {}

ProtocolSession::~ProtocolSession() {
  end_statement();
  writer_.release_held();  // before the handler it may come from
  // Portals and statements may refer to the handler: release them first.
  portals_.clear();
  statements_.clear();
  statement_texts_.clear();
  handler_.reset();
  if (key_) host_.unregister_session(*key_);
}

void ProtocolSession::run() {
  try {
    if (start()) serve();
  } catch (const ConnectionLost&) {
    // The peer is gone: nobody to answer; the destructor releases everything.
  } catch (const Error& error) {
    if (state_ == State::startup || state_ == State::authenticating) host_.connection_refused(error);
    send_fatal(error);
  } catch (const std::exception& e) {
    send_fatal(Error(SqlState::internal_error, e.what(), Severity::fatal));
  }
  state_ = State::closed;
  writer_.release_held();
  portals_.clear();
  statements_.clear();
  statement_texts_.clear();
  handler_.reset();
}

void ProtocolSession::send_fatal(const Error& error) {
  state_ = State::closed;
  try {
    Error fatal = error;
    fatal.with_severity(Severity::fatal);
    encode_error(fatal, channel_.out());
    channel_.flush();
  } catch (const std::exception&) {
    // The peer may already be gone; the connection ends either way.
  }
}

bool ProtocolSession::start() {
  bool ssl_done = false;
  bool gss_done = false;
  frontend::StartupMessage startup;
  while (true) {
    auto packet = channel_.read_startup_packet();
    if (!packet) return false;
    auto decoded = frontend::decode_startup_packet(*packet);
    if (auto* cancel = std::get_if<frontend::CancelRequest>(&decoded)) {
      // Answered with nothing but the closed connection, as PostgreSQL does.
      host_.cancel(BackendKey{cancel->process_id, cancel->secret_key});
      return false;
    }
    if (std::holds_alternative<frontend::SslRequest>(decoded) && !ssl_done) {
      ssl_done = true;
      bool tls = channel_.stream().tls_available() && !channel_.stream().is_tls();
      channel_.out().push_back(tls ? 'S' : 'N');
      channel_.flush();
      if (tls) {
        // Bytes that arrived before the handshake were not encrypted
        // (CVE-2021-23222's lesson): refuse them.
        if (channel_.has_buffered_input()) {
          throw protocol_violation("received unencrypted data after SSL request")
              .with_detail(
                  "This could be either a client-software bug or evidence of an attempted "
                  "man-in-the-middle attack.");
        }
        channel_.stream().start_tls();
      }
      continue;
    }
    if (std::holds_alternative<frontend::GssEncRequest>(decoded) && !gss_done) {
      gss_done = true;
      channel_.out().push_back('N');
      channel_.flush();
      continue;
    }
    if (!std::holds_alternative<frontend::StartupMessage>(decoded)) {
      throw protocol_violation("duplicate SSL or GSSAPI negotiation request");
    }
    startup = std::get<frontend::StartupMessage>(std::move(decoded));
    break;
  }

  if ((startup.version >> 16) != 3) {
    throw Error(SqlState::feature_not_supported,
                "unsupported frontend protocol " + std::to_string(startup.version >> 16) + "." +
                    std::to_string(startup.version & 0xFFFF) + ": server supports 3.0 to 3.0",
                Severity::fatal);
  }
  std::vector<std::string> unrecognized;
  for (auto& [name, value] : startup.parameters) {
    if (name.rfind("_pq_.", 0) == 0) {
      unrecognized.push_back(name);
    } else {
      info_.startup_parameters[name] = value;
    }
  }
  auto user = info_.startup_parameters.find("user");
  if (user == info_.startup_parameters.end() || user->second.empty()) {
    throw Error(SqlState::invalid_authorization_specification,
                "no PostgreSQL user name specified in startup packet", Severity::fatal);
  }
  info_.user = user->second;
  auto database = info_.startup_parameters.find("database");
  info_.database = database == info_.startup_parameters.end() || database->second.empty()
                       ? info_.user
                       : database->second;
  if ((startup.version & 0xFFFF) > 0 || !unrecognized.empty()) {
    backend::encode(backend::NegotiateProtocolVersion{0, unrecognized}, channel_.out());
  }
  state_ = State::authenticating;
  AuthenticationRequest request{info_.user, info_.database, channel_.stream().peer_is_loopback(),
                                channel_.stream().is_tls(), channel_.stream().peer_host()};
  authenticate(channel_, config_.users, request);
  backend::encode(backend::Authentication{backend::AuthCode::ok, ""}, channel_.out());

  // PostgreSQL checks the database after authentication (InitPostgres).
  if (!config_.databases.empty() &&
      std::find(config_.databases.begin(), config_.databases.end(), info_.database) ==
          config_.databases.end()) {
    throw Error(SqlState::invalid_catalog_name,
                "database " + quoted(info_.database) + " does not exist", Severity::fatal);
  }
  const bool superuser = std::find(config_.superusers.begin(), config_.superusers.end(),
                                   info_.user) != config_.superusers.end();
  key_ = host_.register_session(cancel_, superuser);
  host_.set_session_user(*key_, info_.user);
  const auto application = info_.startup_parameters.find("application_name");
  host_.session_started(*key_, info_.database,
                        application == info_.startup_parameters.end() ? std::string() : application->second,
                        channel_.stream().peer_host());
  info_.process_id = key_->process_id;
  info_.cancel = &cancel_;
  info_.prepared = &statements_;
  handler_ = factory_.create(info_);
  for (const auto& [name, value] : handler_->initial_parameter_status()) {
    backend::encode(backend::ParameterStatus{name, value}, channel_.out());
  }
  backend::encode(backend::BackendKeyData{key_->process_id, key_->secret_key}, channel_.out());
  state_ = State::ready;
  channel_.stream().session_established();
  channel_.stream().watch_for_termination(&cancel_);
  ready_for_query();
  return true;
}

void ProtocolSession::ready_for_query() {
  if (key_) host_.session_idle(*key_, handler_->transaction_status());
  backend::encode(backend::ReadyForQuery{handler_->transaction_status()}, channel_.out());
  channel_.flush();
  writer_.release_held();  // the reply is on the wire: what it came from may go now
}

void ProtocolSession::begin_statement() {
  if (cancel_.reason() != CancelReason::shutdown) cancel_.reset();
  if (!timeout_known_) {
    timeout_ms_ = handler_->statement_timeout_ms().value_or(config_.statement_timeout_ms);
    timeout_known_ = true;
  }
  const uint64_t timeout_ms = timeout_ms_;
  if (timeout_ms > 0) {
    host_.set_statement_deadline(
        cancel_, std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms));
    deadline_armed_ = true;
  }
}

void ProtocolSession::end_statement() {
  if (!deadline_armed_) return;
  host_.set_statement_deadline(cancel_, std::nullopt);
  deadline_armed_ = false;
}

void ProtocolSession::serve() {
  char type = 0;
  std::string body;
  while (state_ != State::closed) {
    if (!channel_.read_message(type, body)) return;  // EOF: the client left without Terminate
    if (state_ == State::awaiting_sync && type != 'S') {
      // PostgreSQL validates the type even while skipping; unknown is FATAL.
      frontend::decode(type, body);
      if (type == 'X') return;
      continue;
    }
    doing_extended_ = false;
    bool statement = type == 'Q' || type == 'E' || type == 'P' || type == 'B';
    try {
      dispatch(type, body);
      // Only running a statement (Query, Execute) or ending a transaction
      // (Sync) can change statement_timeout; Parse, Bind, Describe and Close
      // cannot, so a Bind/Execute pair asks the handler once.
      if (type == 'Q' || type == 'E' || type == 'S') timeout_known_ = false;
      end_statement();
      if (type == 'Q' || type == 'E') host_.statement_finished(nullptr);
    } catch (const ConnectionLost&) {
      throw;
    } catch (const Error& error) {
      timeout_known_ = false;
      end_statement();
      if (statement) host_.statement_finished(&error);
      if (error.severity() == Severity::fatal || error.severity() == Severity::panic) throw;
      state_ = State::ready;
      encode_error(error, channel_.out());
      if (handler_) handler_->on_error();
      if (doing_extended_) {
        state_ = State::awaiting_sync;
      } else {
        ready_for_query();
      }
    } catch (const std::exception& e) {
      // A bug below us must not take the connection down with it; an
      // allocation that failed is PostgreSQL's "out of memory", and the
      // session goes on (what the statement held is freed by now).
      timeout_known_ = false;
      end_statement();
      Error error = dynamic_cast<const std::bad_alloc*>(&e) != nullptr
                        ? Error(SqlState::out_of_memory, "out of memory")
                        : Error(SqlState::internal_error, e.what());
      if (statement) host_.statement_finished(&error);
      encode_error(error, channel_.out());
      if (handler_) handler_->on_error();
      if (doing_extended_) {
        state_ = State::awaiting_sync;
      } else {
        state_ = State::ready;
        ready_for_query();
      }
    }
  }
}

void ProtocolSession::dispatch(char type, const std::string& body) {
  frontend::Message message = frontend::decode(type, body);
  std::visit(Overloaded{
                 [&](frontend::Query& m) { simple_query(m); },
                 [&](frontend::Parse& m) {
                   doing_extended_ = true;
                   parse(m);
                 },
                 [&](frontend::Bind& m) {
                   doing_extended_ = true;
                   bind(m);
                 },
                 [&](frontend::Describe& m) {
                   doing_extended_ = true;
                   describe(m);
                 },
                 [&](frontend::Execute& m) {
                   doing_extended_ = true;
                   execute(m);
                 },
                 [&](frontend::Close& m) {
                   doing_extended_ = true;
                   close(m);
                 },
                 [&](frontend::Sync&) { sync(); },
                 [&](frontend::Flush&) { channel_.flush(); },
                 [&](frontend::Terminate&) { state_ = State::closed; },
                 // COPY messages after a failed COPY: PostgreSQL accepts and ignores them.
                 [&](frontend::CopyData&) {},
                 [&](frontend::CopyDone&) {},
                 [&](frontend::CopyFail&) {},
                 [&](frontend::PasswordMessage&) {
                   throw protocol_violation("invalid frontend message type 112");
                 },
                 [&](frontend::FunctionCall&) {
                   throw Error(SqlState::feature_not_supported,
                               "fastpath function calls are not supported");
                 },
             },
             message);
}

void ProtocolSession::simple_query(const frontend::Query& m) {
  state_ = State::in_query;
  statement_timeline().begin(host_.wants_statement_timeline());
  // A simple Query drops the unnamed statement and portal (exec_simple_query).
  statements_.erase("");
  statement_texts_.erase("");
  portals_.erase("");
  host_.statement_started(*key_, m.sql);
  begin_statement();
  writer_.set_in_execute(false);
  handler_->simple_query(m.sql, writer_);
  statement_timeline().stamp(StatementTimeline::statement_done);
  drop_portals_if_idle();
  state_ = State::ready;
  ready_for_query();
  report_timeline();
}

void ProtocolSession::parse(frontend::Parse& m) {
  state_ = State::in_query;
  if (!m.name.empty() && statements_.contains(m.name)) {
    throw Error(SqlState::duplicate_prepared_statement,
                "prepared statement " + quoted(m.name) + " already exists");
  }
  begin_statement();
  std::shared_ptr<PreparedStatement> statement = handler_->prepare(m.query, m.param_types);
  statements_.put(m.name, std::move(statement));
  statement_texts_.put(m.name, m.query);
  backend::encode(backend::ParseComplete{}, channel_.out());
  state_ = State::ready;
}

void ProtocolSession::bind(frontend::Bind& m) {
  state_ = State::in_query;
  std::shared_ptr<PreparedStatement>* found = statements_.find(m.statement);
  if (found == nullptr) throw statement_missing(m.statement);
  std::shared_ptr<PreparedStatement> statement = *found;
  size_t expected = statement->parameter_types().size();
  if (m.param_formats.size() > 1 && m.param_formats.size() != m.params.size()) {
    throw Error(SqlState::protocol_violation,
                "bind message has " + std::to_string(m.param_formats.size()) +
                    " parameter formats but " + std::to_string(m.params.size()) + " parameters");
  }
  if (m.params.size() != expected) {
    throw Error(SqlState::protocol_violation,
                "bind message supplies " + std::to_string(m.params.size()) +
                    " parameters, but prepared statement " + quoted(m.statement) + " requires " +
                    std::to_string(expected));
  }
  std::vector<Format> param_formats = checked_formats(m.param_formats);
  std::vector<Format> result_formats = checked_formats(m.result_formats);
  if (result_formats.size() > 1) {
    auto fields = statement->result_fields();
    size_t columns = fields ? fields->size() : 0;
    if (result_formats.size() != columns) {
      throw Error(SqlState::protocol_violation,
                  "bind message has " + std::to_string(result_formats.size()) +
                      " result formats but query has " + std::to_string(columns) + " columns");
    }
  }
  std::vector<ParameterValue> params;
  params.reserve(m.params.size());
  for (size_t i = 0; i < m.params.size(); ++i) {
    Format format = param_formats.empty()       ? Format::text
                    : param_formats.size() == 1 ? param_formats[0]
                                                : param_formats[i];
    params.push_back(ParameterValue{std::move(m.params[i]), format});
  }
  if (!m.portal.empty() && portals_.contains(m.portal)) {
    throw Error(SqlState::duplicate_cursor, "cursor " + quoted(m.portal) + " already exists");
  }
  begin_statement();
  // The unnamed portal is replaced (and released) before the new one is made.
  portals_.erase(m.portal);
  std::unique_ptr<Portal> portal = handler_->bind(*statement, params, result_formats);
  const std::string* text = statement_texts_.find(m.statement);
  portals_.put(m.portal, PortalEntry{std::move(statement), std::move(portal), text != nullptr ? *text : std::string()});
  backend::encode(backend::BindComplete{}, channel_.out());
  state_ = State::ready;
}

void ProtocolSession::describe(const frontend::Describe& m) {
  std::optional<std::vector<FieldDescription>> fields;
  if (m.kind == 'S') {
    std::shared_ptr<PreparedStatement>* statement = statements_.find(m.name);
    if (statement == nullptr) throw statement_missing(m.name);
    backend::encode(backend::ParameterDescription{(*statement)->parameter_types()}, channel_.out());
    fields = (*statement)->result_fields();
  } else if (m.kind == 'P') {
    PortalEntry* entry = portals_.find(m.name);
    if (entry == nullptr) throw portal_missing(m.name);
    fields = entry->portal->result_fields();
  } else {
    throw Error(SqlState::protocol_violation,
                "invalid DESCRIBE message subtype " + std::to_string(static_cast<int>(m.kind)));
  }
  if (fields) {
    backend::encode_row_description(*fields, channel_.out());
  } else {
    backend::encode(backend::NoData{}, channel_.out());
  }
}

void ProtocolSession::execute(const frontend::Execute& m) {
  PortalEntry* entry = portals_.find(m.portal);
  if (entry == nullptr) throw portal_missing(m.portal);
  state_ = State::in_query;
  statement_timeline().begin(host_.wants_statement_timeline());
  host_.statement_started(*key_, entry->sql);
  begin_statement();
  writer_.set_in_execute(true);
  uint64_t max_rows = m.max_rows > 0 ? static_cast<uint64_t>(m.max_rows) : 0;
  bool finished = false;
  try {
    finished = entry->portal->execute(max_rows, writer_);
  } catch (...) {
    writer_.set_in_execute(false);
    throw;
  }
  writer_.set_in_execute(false);
  statement_timeline().stamp(StatementTimeline::statement_done);
  if (!finished) backend::encode(backend::PortalSuspended{}, channel_.out());
  state_ = State::ready;
}

void ProtocolSession::close(const frontend::Close& m) {
  if (m.kind == 'S') {
    statements_.erase(m.name);  // closing what does not exist is not an error
    statement_texts_.erase(m.name);
  } else if (m.kind == 'P') {
    portals_.erase(m.name);
  } else {
    throw Error(SqlState::protocol_violation,
                "invalid CLOSE message subtype " + std::to_string(static_cast<int>(m.kind)));
  }
  backend::encode(backend::CloseComplete{}, channel_.out());
}

void ProtocolSession::sync() {
  state_ = State::ready;
  handler_->sync();
  drop_portals_if_idle();
  ready_for_query();
  report_timeline();
}

void ProtocolSession::report_timeline() {
  StatementTimeline& timeline = statement_timeline();
  if (!timeline.enabled) return;
  timeline.stamp(StatementTimeline::ready_for_query);
  host_.statement_timeline(info_.process_id, timeline);
  timeline.enabled = false;  // one report per statement
}

void ProtocolSession::drop_portals_if_idle() {
  if (handler_->transaction_status() == TransactionStatus::idle) portals_.clear();
}

}  // namespace tally::protocol
