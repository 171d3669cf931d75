#pragma once
// A wire client that times one query in phases, from the client's side, so a
// benchmark can say where end-to-end time goes without server changes:
//   bind_us:      Parse + Bind + Flush until BindComplete (parse, analysis and
//                 planning on the server, plus one round trip);
//   first_row_us: Execute + Sync until the first DataRow (the aggregation, the
//                 result set-up and the first flushed block of DataRows);
//   rest_us:      first DataRow until ReadyForQuery (the remaining rows'
//                 encoding, the socket and this client's parse).
// Two round trips instead of the lean client's one: the phases add up to a
// little more than a one-round query. TCP (TCP_NODELAY) or a unix socket,
// trust authentication only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tally::bench {

class PhaseClient {
 public:
  struct Phases {
    double bind_us = 0, first_row_us = 0, rest_us = 0;
    uint64_t rows = 0;
    double total_us() const { return bind_us + first_row_us + rest_us; }
  };

  explicit PhaseClient(const std::string& conninfo) {
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
    buffer_.resize(4 << 20);
    std::string body;
    put32(body, 196608);  // protocol 3.0
    for (const char* key : {"user", "database"}) {
      body += key;
      body.push_back('\0');
      body += std::string(key) == "user" ? kv["user"] : (kv.count("dbname") ? kv["dbname"] : kv["user"]);
      body.push_back('\0');
    }
    body.push_back('\0');
    std::string startup;
    put32(startup, static_cast<uint32_t>(body.size() + 4));
    send_all(startup + body);
    for (char type = 0; type != 'Z';) {
      type = next().type;
      if (type == 'E') throw std::runtime_error("startup failed");
    }
  }
  ~PhaseClient() {
    if (fd_ >= 0) {
      const char terminate[5] = {'X', 0, 0, 0, 4};
      (void)::send(fd_, terminate, sizeof terminate, MSG_NOSIGNAL);
      ::close(fd_);
    }
  }
  PhaseClient(const PhaseClient&) = delete;
  PhaseClient& operator=(const PhaseClient&) = delete;

  // Runs sql (no parameters, text results); throws on an ErrorResponse.
  Phases query(const std::string& sql) {
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
    std::string round1 = message('P', parse) + message('B', bind) + message('H', "");
    std::string execute(1, '\0');
    put32(execute, 0);  // all rows
    const std::string round2 = message('E', execute) + message('S', "");
    Phases p;
    const auto t0 = Clock::now();
    send_all(round1);
    for (bool bound = false; !bound;) {
      const char type = next().type;
      if (type == 'E') fail(sql);
      bound = type == '2';
    }
    const auto t1 = Clock::now();
    send_all(round2);
    Clock::time_point first = {};
    bool error = false;
    for (char type = 0; type != 'Z';) {
      type = next().type;
      if (type == 'D' && p.rows++ == 0) first = Clock::now();
      error |= type == 'E';
    }
    const auto t3 = Clock::now();
    if (error) throw std::runtime_error(sql + " failed");
    if (p.rows == 0) first = t3;
    p.bind_us = us(t0, t1);
    p.first_row_us = us(t1, first);
    p.rest_us = us(first, t3);
    return p;
  }

 private:
  struct Message {
    char type;
    std::string_view body;
  };
  [[noreturn]] void fail(const std::string& sql) {
    // Skip to ReadyForQuery (the server skips to our Sync... which round 1 lacks: send one).
    send_all(message('S', ""));
    while (next().type != 'Z') {
    }
    throw std::runtime_error(sql + " failed");
  }
  static std::string message(char type, const std::string& body) {
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
  void send_all(const std::string& data) {
    for (size_t sent = 0; sent < data.size();) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<size_t>(n);
    }
  }
  Message next() {
    for (;;) {
      const size_t have = end_ - begin_;
      if (have >= 5) {
        uint32_t len;
        std::memcpy(&len, buffer_.data() + begin_ + 1, 4);
        len = ntohl(len);
        if (have >= len + 1) {
          Message m{buffer_[begin_], std::string_view(buffer_.data() + begin_ + 5, len - 4)};
          begin_ += len + 1;
          return m;
        }
        if (len + 1 > buffer_.size()) buffer_.resize(len + 1);
      }
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
