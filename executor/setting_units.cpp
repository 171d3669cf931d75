#include "executor/setting_units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tally::executor {
namespace {

struct Unit {
  std::string_view name;
  double size;  // in bytes or milliseconds
};

// Largest first: printing takes the first that divides the value exactly.
constexpr Unit kMemoryUnits[] = {{"TB", 1024.0 * 1024 * 1024 * 1024}, {"GB", 1024.0 * 1024 * 1024},
                                 {"MB", 1024.0 * 1024}, {"kB", 1024.0}, {"B", 1.0}};
constexpr Unit kTimeUnits[] = {{"d", 86'400'000.0}, {"h", 3'600'000.0}, {"min", 60'000.0},
                               {"s", 1000.0},       {"ms", 1.0},        {"us", 0.001}};

// The size of a base unit and the family it belongs to; nullopt when unknown.
std::optional<std::pair<double, bool>> base_size(std::string_view base_unit) {  // (size, is_memory)
  if (base_unit == "8kB") return std::pair{8192.0, true};
  for (const auto& u : kMemoryUnits) {
    if (u.name == base_unit) return std::pair{u.size, true};
  }
  for (const auto& u : kTimeUnits) {
    if (u.name == base_unit) return std::pair{u.size, false};
  }
  return std::nullopt;
}

template <typename Print>
std::string format_in_units(double value, std::string_view base_unit, Print print) {
  const auto base = base_size(base_unit);
  if (!base || value <= 0) return print(value) ;
  const double amount = value * base->first;
  auto pick = [&](const auto& units) -> std::string {
    for (const auto& u : units) {
      // A unit no larger than the base always divides; PostgreSQL stops there.
      if (u.size <= base->first || std::fmod(amount, u.size) == 0) {
        return print(std::rint(amount / u.size * 1e6) / 1e6) + std::string(u.name);
      }
    }
    return print(value) + std::string(base_unit);
  };
  return base->second ? pick(kMemoryUnits) : pick(kTimeUnits);
}

}  // namespace

std::optional<double> parse_with_unit(std::string_view text, std::string_view base_unit, bool* bad_unit) {
  if (bad_unit) *bad_unit = false;
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double number = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || std::isnan(number) || std::isinf(number)) return std::nullopt;
  std::string_view rest(end);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  if (rest.empty()) return number;
  const auto base = base_size(base_unit);
  if (!base) {
    if (bad_unit) *bad_unit = !base_unit.empty() || std::isalpha(static_cast<unsigned char>(rest.front()));
    return std::nullopt;
  }
  auto convert = [&](const auto& units) -> std::optional<double> {
    for (const auto& u : units) {
      if (u.name == rest) return number * u.size / base->first;
    }
    if (bad_unit) *bad_unit = true;
    return std::nullopt;
  };
  return base->second ? convert(kMemoryUnits) : convert(kTimeUnits);
}

std::string format_real(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::string format_integer_with_unit(long long value, std::string_view base_unit) {
  return format_in_units(static_cast<double>(value), base_unit,
                         [](double v) { return std::to_string(static_cast<long long>(std::llround(v))); });
}

std::string format_real_with_unit(double value, std::string_view base_unit) {
  return format_in_units(value, base_unit, [](double v) { return format_real(v); });
}

std::string in_base_unit(std::string_view shown, std::string_view base_unit, bool real) {
  if (base_unit.empty()) return std::string(shown);
  const auto value = parse_with_unit(shown, base_unit);
  if (!value) return std::string(shown);
  return real ? format_real(*value) : std::to_string(std::llround(*value));
}

std::string unit_hint(std::string_view base_unit) {
  const auto base = base_size(base_unit);
  if (!base) return "";
  return base->second ? "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\"."
                      : "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".";
}

}  // namespace tally::executor
