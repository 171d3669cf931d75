#pragma once
// Structured logging for every layer: one line per event, with key=value
// fields, as text ("2026-01-02T03:04:05.678Z level=info event=query_done
// duration_ms=1.25") or as JSON lines ({"ts":...,"level":"info","event":...}).
// Thread-safe; the level and format can change at run time (SIGHUP).
//
//   log::info("connection_accepted", {{"remote", peer}, {"session", id}});
//   if (log::enabled(log::Level::debug)) log::debug("plan", {{"text", explain()}});
//
// Events are short snake_case names so lines can be grepped and aggregated;
// variable data goes in fields. Never log passwords or row data.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace tally::log {

enum class Level { debug = 0, info = 1, warning = 2, error = 3 };
enum class Format { text, json };

// One key=value pair. Strings are referenced, not copied: build the fields in
// the call expression.
struct Field {
  using Value = std::variant<std::string_view, int64_t, uint64_t, double, bool>;

  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  Field(std::string_view k, const char* v) : key(k), value(std::string_view(v ? v : "")) {}
  Field(std::string_view k, bool v) : key(k), value(v) {}
  Field(std::string_view k, double v) : key(k), value(v) {}
  Field(std::string_view k, float v) : key(k), value(double(v)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Field(std::string_view k, T v) : key(k) {
    if constexpr (std::is_signed_v<T>) value = int64_t(v);
    else value = uint64_t(v);
  }

  std::string_view key;
  Value value;
};

void set_level(Level level);
Level level();
inline bool enabled(Level l) { return static_cast<int>(l) >= static_cast<int>(level()); }
void set_format(Format format);
Format format();

// Where finished lines go (each call gets one line with its trailing newline).
// Default: one write(2) per line to stderr. Pass nullptr to restore it.
void set_sink(std::function<void(std::string_view line)> sink);

// Parses "debug" | "info" | "warning" | "error" (case-insensitive).
bool parse_level(std::string_view text, Level& out);
std::string_view level_name(Level level);

// Formats one event as a line without writing it (also used by tests).
std::string format_line(Level level, std::string_view event, std::initializer_list<Field> fields,
                        Format format);

void write(Level level, std::string_view event, std::initializer_list<Field> fields = {});
inline void debug(std::string_view event, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::debug)) write(Level::debug, event, fields);
}
inline void info(std::string_view event, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::info)) write(Level::info, event, fields);
}
inline void warning(std::string_view event, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::warning)) write(Level::warning, event, fields);
}
inline void error(std::string_view event, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::error)) write(Level::error, event, fields);
}

}  // namespace tally::log
