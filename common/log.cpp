#include "common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "common/json_string.hpp"

namespace tally::log {
namespace {

std::atomic<Level> current_level{Level::info};
std::atomic<Format> current_format{Format::text};
std::mutex sink_mutex;
std::function<void(std::string_view)> current_sink;  // guarded by sink_mutex

void write_stderr(std::string_view line) {
  // One write per line keeps lines whole even with other writers on fd 2.
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= size_t(n);
  }
}

std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(millis));
  return buf;
}

// logfmt quoting: bare when the value has no space, quote, '=' or control byte.
void append_text_value(std::string& out, std::string_view text) {
  bool bare = !text.empty();
  for (unsigned char c : text)
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) bare = false;
  if (bare) out += text;
  else append_json_string(out, text);
}

std::string number_text(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void append_value(std::string& out, const Field::Value& value, Format format) {
  std::visit(
      [&](auto&& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          if (format == Format::json) append_json_string(out, v);
          else append_text_value(out, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          std::string text = number_text(v);
          // JSON has no NaN or Infinity: such values become strings there.
          if (format == Format::json && !std::isfinite(v)) append_json_string(out, text);
          else out += text;
        } else {
          out += std::to_string(v);
        }
      },
      value);
}

}  // namespace

void set_level(Level level) { current_level.store(level, std::memory_order_relaxed); }
Level level() { return current_level.load(std::memory_order_relaxed); }
void set_format(Format format) { current_format.store(format, std::memory_order_relaxed); }
Format format() { return current_format.load(std::memory_order_relaxed); }

void set_sink(std::function<void(std::string_view)> sink) {
  std::lock_guard lock(sink_mutex);
  current_sink = std::move(sink);
}

bool parse_level(std::string_view text, Level& out) {
  std::string l;
  for (char c : text) l += char(std::tolower(static_cast<unsigned char>(c)));
  if (l == "debug") out = Level::debug;
  else if (l == "info") out = Level::info;
  else if (l == "warning") out = Level::warning;
  else if (l == "error") out = Level::error;
  else return false;
  return true;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warning: return "warning";
    case Level::error: return "error";
  }
  return "info";
}

std::string format_line(Level level, std::string_view event, std::initializer_list<Field> fields,
                        Format format) {
  std::string out;
  out.reserve(128);
  if (format == Format::json) {
    out += "{\"ts\":\"" + timestamp() + "\",\"level\":\"" + std::string(level_name(level)) +
           "\",\"event\":";
    append_json_string(out, event);
    for (const Field& f : fields) {
      out += ',';
      append_json_string(out, f.key);
      out += ':';
      append_value(out, f.value, format);
    }
    out += "}\n";
  } else {
    out += timestamp();
    out += " level=";
    out += level_name(level);
    out += " event=";
    append_text_value(out, event);
    for (const Field& f : fields) {
      out += ' ';
      out += f.key;
      out += '=';
      append_value(out, f.value, format);
    }
    out += '\n';
  }
  return out;
}

void write(Level level, std::string_view event, std::initializer_list<Field> fields) {
  if (!enabled(level)) return;
  std::string line = format_line(level, event, fields, format());
  std::lock_guard lock(sink_mutex);
  if (current_sink) current_sink(line);
  else write_stderr(line);
}

}  // namespace tally::log
