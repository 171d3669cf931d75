#pragma once
// A lean PostgreSQL v3 client for benchmarks: one socket, trust
// authentication, and one extended-protocol round (Parse/Bind/Execute/Sync)
// per query whose DataRows are parsed in place from a large receive buffer,
// never materialized. libpq's PQexec keeps every row of a result in a
// PGresult (an allocation per row); on a 2-core machine that shares the CPU
// with the server, that client cost is part of what a libpq-timed benchmark
// measures. The same client runs against both servers, so the comparison stays
// fair. query_phases times one query in phases instead (see there).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tally::bench {

// The row checksum cpu_bench uses for every client: per row, a mix of each
// field's bytes (NULL as empty, as PQgetvalue gives it) and position; rows
// summed, so order does not matter.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return x;
}
inline uint64_t field_hash(uint64_t row_hash, std::string_view field, int index) {
  return mix64(row_hash ^ std::hash<std::string_view>{}(field) ^ static_cast<uint64_t>(index));
}
constexpr uint64_t kRowHashSeed = 0x12345;

class WireClient {
 public:
  struct Result {
    uint64_t rows = 0;
    uint64_t checksum = 0;
    uint64_t bytes = 0;  // DataRow bytes received
  };

  // conninfo as libpq's key=value form: host (a directory = unix socket), port, user, dbname.
  explicit WireClient(const std::string& conninfo) {
    std::map<std::string, std::string> kv;
    std::istringstream in(conninfo);
    for (std::string item; in >> item;) {
      const auto eq = item.find('=');
      if (eq != std::string::npos) kv[item.substr(0, eq)] = item.substr(eq + 1);
    }
    const std::string host = kv.count("host") ? kv["host"] : "127.0.0.1";
    const int port = kv.count("port") ? std::stoi(kv["port"]) : 5432;
    if (!host.empty() && host[0] == '/') {
      fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      const std::string path = host + "/.s.PGSQL." + std::to_string(port);
      std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
      if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect " + path);
    } else {
      fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("bad host " + host);
      if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect " + host);
      const int one = 1;
      ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    buffer_.resize(kBufferBytes);
    // StartupMessage: length, protocol 3.0, user, database.
    std::string body;
    put32(body, 196608);
    body += "user";
    body.push_back('\0');
    body += kv["user"];
    body.push_back('\0');
    body += "database";
    body.push_back('\0');
    body += kv.count("dbname") ? kv["dbname"] : kv["user"];
    body.push_back('\0');
    body.push_back('\0');
    std::string message;
    put32(message, static_cast<uint32_t>(body.size() + 4));
    message += body;
    send_all(message);
    // Until ReadyForQuery: AuthenticationOk (trust) only.
    for (;;) {
      const Message m = next();
      if (m.type == 'R') {
        if (get32(m.body) != 0) throw std::runtime_error("WireClient supports trust authentication only");
      } else if (m.type == 'E') {
        throw std::runtime_error("startup failed: " + error_text(m.body));
      } else if (m.type == 'Z') {
        break;
      }
    }
  }
  ~WireClient() {
    if (fd_ >= 0) {
      const char terminate[5] = {'X', 0, 0, 0, 4};
      (void)::send(fd_, terminate, sizeof terminate, MSG_NOSIGNAL);
      ::close(fd_);
    }
  }
  WireClient(const WireClient&) = delete;
  WireClient& operator=(const WireClient&) = delete;

  // Runs sql (no parameters), every result column in text (binary = false)
  // or binary; parses each DataRow into the checksum. Throws on an ErrorResponse.
  Result query(const std::string& sql, bool binary) {
    std::string out;
    auto message = [&](char type, const std::string& body) {
      out.push_back(type);
      put32(out, static_cast<uint32_t>(body.size() + 4));
      out += body;
    };
    std::string parse;
    parse.push_back('\0');  // unnamed statement
    parse += sql;
    parse.push_back('\0');
    put16(parse, 0);
    message('P', parse);
    std::string bind;
    bind.push_back('\0');  // unnamed portal
    bind.push_back('\0');  // unnamed statement
    put16(bind, 0);        // parameter formats
    put16(bind, 0);        // parameters
    put16(bind, 1);        // one result format for every column
    put16(bind, binary ? 1 : 0);
    message('B', bind);
    std::string execute;
    execute.push_back('\0');
    put32(execute, 0);  // all rows
    message('E', execute);
    message('S', std::string());
    send_all(out);
    Result r;
    std::string error;
    for (;;) {
      const Message m = next();
      if (m.type == 'D') {
        const char* p = m.body.data();
        const int fields = static_cast<int>(get16(std::string_view(p, 2)));
        p += 2;
        uint64_t h = kRowHashSeed;
        for (int f = 0; f < fields; ++f) {
          const auto len = static_cast<int32_t>(get32(std::string_view(p, 4)));
          p += 4;
          const std::string_view value = len < 0 ? std::string_view() : std::string_view(p, static_cast<size_t>(len));
          if (len > 0) p += len;
          h = field_hash(h, value, f);
        }
        r.checksum += h;
        ++r.rows;
        r.bytes += m.body.size() + 5;
      } else if (m.type == 'E') {
        error = error_text(m.body);
      } else if (m.type == 'Z') {
        break;
      }
    }
    if (!error.empty()) throw std::runtime_error(sql + " failed: " + error);
    return r;
  }

  // One query timed in phases from the client's side, so a benchmark can say
  // where end-to-end time goes without server changes:
  //   bind_us:      Parse + Bind + Flush until BindComplete (parse, analysis
  //                 and planning on the server, plus one round trip);
  //   first_row_us: Execute + Sync until the first DataRow (the aggregation,
  //                 the result set-up and the first flushed block of DataRows);
  //   rest_us:      first DataRow until ReadyForQuery (the remaining rows'
  //                 encoding, the socket and this client's parse).
  // Two round trips instead of query()'s one: the phases add up to a little
  // more than a one-round query.
  struct Phases {
    double bind_us = 0, first_row_us = 0, rest_us = 0;
    uint64_t rows = 0;
    double total_us() const { return bind_us + first_row_us + rest_us; }
  };

  // Runs sql (no parameters, text results) in phases; throws on an ErrorResponse.
  Phases query_phases(const std::string& sql) {
    using Clock = std::chrono::steady_clock;
    const auto us = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::micro>(b - a).count();
    };
    std::string parse(1, '\0');
    parse += sql;
    parse.push_back('\0');
    put16(parse, 0);
    std::string bind(2, '\0');  // unnamed portal, unnamed statement
    put16(bind, 0);             // parameter formats
    put16(bind, 0);             // parameters
    put16(bind, 0);             // result formats: all text
    const std::string round1 = framed('P', parse) + framed('B', bind) + framed('H', "");
    std::string execute(1, '\0');
    put32(execute, 0);  // all rows
    const std::string round2 = framed('E', execute) + framed('S', "");
    Phases p;
    const auto t0 = Clock::now();
    send_all(round1);
    for (bool bound = false; !bound;) {
      const Message m = next();
      if (m.type == 'E') {
        // Round 1 has no Sync for the server to skip to: send one, drain.
        const std::string error = error_text(m.body);
        send_all(framed('S', ""));
        while (next().type != 'Z') {
        }
        throw std::runtime_error(sql + " failed: " + error);
      }
      bound = m.type == '2';
    }
    const auto t1 = Clock::now();
    send_all(round2);
    Clock::time_point first = {};
    std::string error;
    for (char type = 0; type != 'Z';) {
      const Message m = next();
      type = m.type;
      if (type == 'D' && p.rows++ == 0) first = Clock::now();
      if (type == 'E') error = error_text(m.body);
    }
    const auto t3 = Clock::now();
    if (!error.empty()) throw std::runtime_error(sql + " failed: " + error);
    if (p.rows == 0) first = t3;
    p.bind_us = us(t0, t1);
    p.first_row_us = us(t1, first);
    p.rest_us = us(first, t3);
    return p;
  }

 private:
  // Receive buffer: large enough that one recv usually brings many rows.
  static constexpr size_t kBufferBytes = 4 << 20;

  struct Message {
    char type;
    std::string_view body;  // valid until the next call of next()
  };

  // A whole message: type, length, body.
  static std::string framed(char type, const std::string& body) {
    std::string out(1, type);
    put32(out, static_cast<uint32_t>(body.size() + 4));
    return out + body;
  }
  static void put16(std::string& s, uint16_t v) {
    v = htons(v);
    s.append(reinterpret_cast<const char*>(&v), 2);
  }
  static void put32(std::string& s, uint32_t v) {
    v = htonl(v);
    s.append(reinterpret_cast<const char*>(&v), 4);
  }
  static uint16_t get16(std::string_view s) {
    uint16_t v;
    std::memcpy(&v, s.data(), 2);
    return ntohs(v);
  }
  static uint32_t get32(std::string_view s) {
    uint32_t v;
    std::memcpy(&v, s.data(), 4);
    return ntohl(v);
  }

  static std::string error_text(std::string_view body) {
    std::string text;
    for (size_t i = 0; i < body.size() && body[i] != '\0';) {
      const char code = body[i++];
      const size_t end = body.find('\0', i);
      if (code == 'C' || code == 'M') text += std::string(body.substr(i, end - i)) + " ";
      i = end + 1;
    }
    return text;
  }

  void send_all(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<size_t>(n);
    }
  }

  // The next whole message, parsed in place (the buffer grows for a message
  // larger than it).
  Message next() {
    for (;;) {
      const size_t have = end_ - begin_;
      if (have >= 5) {
        const uint32_t len = get32(std::string_view(buffer_.data() + begin_ + 1, 4));
        if (have >= len + 1) {
          Message m{buffer_[begin_], std::string_view(buffer_.data() + begin_ + 5, len - 4)};
          begin_ += len + 1;
          return m;
        }
        if (len + 1 > buffer_.size()) buffer_.resize(len + 1);
      }
      // Move the partial message to the front, then read more.
      if (begin_ > 0) {
        std::memmove(buffer_.data(), buffer_.data() + begin_, have);
        begin_ = 0;
        end_ = have;
      }
      const ssize_t n = ::recv(fd_, buffer_.data() + end_, buffer_.size() - end_, 0);
      if (n <= 0) throw std::runtime_error("connection closed");
      end_ += static_cast<size_t>(n);
    }
  }

  int fd_ = -1;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
};

}  // namespace tally::bench
