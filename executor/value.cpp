#include "executor/value.hpp"

#include <cstring>
#include <functional>

#include "executor/finalize.hpp"
#include "executor/tuple_key.hpp"

namespace tally::executor {

Physical physical_of(TypeId id) {
  switch (id) {
    case TypeId::boolean: return Physical::boolean;
    case TypeId::float4:
    case TypeId::float8: return Physical::floating;
    case TypeId::numeric: return Physical::numeric;
    case TypeId::text:
    case TypeId::varchar:
    case TypeId::bpchar:
    case TypeId::unknown:
    case TypeId::name:
    case TypeId::text_array:
    case TypeId::oid_array:
    case TypeId::int2_array:
    case TypeId::name_array:
    case TypeId::record:
    case TypeId::void_:
    case TypeId::int2vector:
    case TypeId::oidvector:
    case TypeId::char_:
    case TypeId::bytea: return Physical::text;
    case TypeId::interval: return Physical::interval;
    default: return Physical::integer;
  }
}

Value Vector::get(size_t i) const {
  if (null_at(i)) return Null{};
  if (avg_parts) return avg_of_int64(avg_parts->sum[i], avg_parts->counts()[i]);
  if (shared_ints) return (*shared_ints)[i];
  switch (physical_of(type.id)) {
    case Physical::boolean: return ints[i] != 0;
    case Physical::integer: return ints[i];
    case Physical::floating: return floats[i];
    case Physical::numeric: return numerics[i];
    case Physical::text: return coded() ? std::string(text_at(i)) : texts[i];
    case Physical::interval: return intervals[i];
  }
  return Null{};
}

void Vector::get_into(size_t i, Value& out) const {
  if (physical_of(type.id) == Physical::text && !null_at(i)) {
    if (auto* text = std::get_if<std::string>(&out)) {
      text->assign(text_at(i));
      return;
    }
  }
  out = get(i);
}

void Vector::materialize() {
  if (!coded()) return;
  texts.assign(codes.size(), std::string());
  const int32_t entries = dictionary->size();
  for (size_t i = 0; i < codes.size(); ++i) {
    // Rows grown but never set hold code 0, which an empty dictionary lacks.
    if (!null_at(i) && codes[i] >= 0 && codes[i] < entries) texts[i] = std::string(dictionary->at(codes[i]));
  }
  codes = {};
  dictionary.reset();
}

void Vector::reserve(size_t n) {
  switch (physical_of(type.id)) {
    case Physical::boolean:
    case Physical::integer: ints.reserve(n); break;
    case Physical::floating: floats.reserve(n); break;
    case Physical::numeric: numerics.reserve(n); break;
    case Physical::text: coded() ? codes.reserve(n) : texts.reserve(n); break;
    case Physical::interval: intervals.reserve(n); break;
  }
}

void Vector::resize(size_t n) {
  switch (physical_of(type.id)) {
    case Physical::boolean:
    case Physical::integer: ints.resize(n); break;
    case Physical::floating: floats.resize(n); break;
    case Physical::numeric: numerics.resize(n); break;
    case Physical::text: coded() ? codes.resize(n) : texts.resize(n); break;
    case Physical::interval: intervals.resize(n); break;
  }
  if (!nulls.empty()) nulls.resize(n, 0);
  count = n;
}

void Vector::set_null(size_t i) {
  if (nulls.empty()) nulls.assign(count, 0);
  nulls[i] = 1;
}

void Vector::set(size_t i, const Value& v) {
  if (is_null(v)) { set_null(i); return; }
  if (!nulls.empty()) nulls[i] = 0;
  switch (physical_of(type.id)) {
    case Physical::boolean: ints[i] = std::get<bool>(v) ? 1 : 0; break;
    case Physical::integer: ints[i] = std::get<int64_t>(v); break;
    case Physical::floating: floats[i] = std::get<double>(v); break;
    case Physical::numeric: numerics[i] = std::get<Numeric>(v); break;
    case Physical::text:
      materialize();  // a written string need not be in the dictionary
      texts[i] = std::get<std::string>(v);
      break;
    case Physical::interval: intervals[i] = std::get<Interval>(v); break;
  }
}

void Vector::set_from(size_t i, const Vector& from, size_t j) {
  if (from.null_at(j)) {
    set_null(i);
    return;
  }
  const Physical physical = physical_of(type.id);
  if (physical != physical_of(from.type.id) || from.avg_parts) {
    set(i, from.get(j));
    return;
  }
  if (!nulls.empty()) nulls[i] = 0;
  switch (physical) {
    case Physical::boolean:
    case Physical::integer: ints[i] = from.int_data()[j]; break;
    case Physical::floating: floats[i] = from.floats[j]; break;
    case Physical::numeric: numerics[i] = from.numerics[j]; break;
    case Physical::text:
      materialize();
      texts[i].assign(from.text_at(j));
      break;
    case Physical::interval: intervals[i] = from.intervals[j]; break;
  }
}

void Vector::push(const Value& v) {
  materialize();
  resize(count + 1);
  set(count - 1, v);
}

int compare_values(const Value& a, const Value& b) {
  switch (a.index()) {
    case 1: return static_cast<int>(std::get<bool>(a)) - static_cast<int>(std::get<bool>(b));
    case 2: {
      const auto x = std::get<int64_t>(a), y = std::get<int64_t>(b);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case 3: {
      // PostgreSQL orders NaN above every other value and equal to itself.
      const double x = std::get<double>(a), y = std::get<double>(b);
      const bool xn = x != x, yn = y != y;
      if (xn || yn) return xn && yn ? 0 : (xn ? 1 : -1);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case 4: {
      const auto c = std::get<Numeric>(a) <=> std::get<Numeric>(b);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 5: {
      const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 6: {
      const __int128 x = interval_key(std::get<Interval>(a)), y = interval_key(std::get<Interval>(b));
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    default: return 0;
  }
}

__int128 interval_key(const Interval& v) {
  constexpr int64_t usecs_per_day = 86'400'000'000LL;
  return (static_cast<__int128>(v.months) * 30 + v.days) * usecs_per_day + v.micros;
}

bool values_equal(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  return compare_values(a, b) == 0;
}

uint64_t hash_value(const Value& v) {
  auto mix = [](uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
  };
  switch (v.index()) {
    case 1: return mix(std::get<bool>(v) ? 1 : 2);
    case 2: return mix(static_cast<uint64_t>(std::get<int64_t>(v)));
    case 3: {
      double d = std::get<double>(v);
      if (d == 0) d = 0;  // -0 == 0
      if (d != d) return mix(0x7ff8);
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return mix(bits);
    }
    case 4: {
      // Normalize trailing zeros so that 1.50 and 1.5 hash alike.
      Numeric n = std::get<Numeric>(v);
      while (n.scale > 0 && n.mantissa % 10 == 0) { n.mantissa /= 10; --n.scale; }
      return mix(static_cast<uint64_t>(n.mantissa) ^ mix(static_cast<uint64_t>(n.mantissa >> 64)) ^
                 static_cast<uint64_t>(n.scale));
    }
    case 5: return std::hash<std::string>{}(std::get<std::string>(v));
    case 6: {
      const __int128 key = interval_key(std::get<Interval>(v));
      return mix(static_cast<uint64_t>(key) ^ mix(static_cast<uint64_t>(key >> 64)));
    }
    default: return 0x9e3779b97f4a7c15ULL;
  }
}

std::string tuple_key(const std::vector<Value>& values) {
  std::string key;
  for (const auto& v : values) {
    key.push_back(static_cast<char>('0' + v.index()));
    const uint64_t h = hash_value(v);
    key.append(reinterpret_cast<const char*>(&h), sizeof h);
    if (const auto* s = std::get_if<std::string>(&v)) key.append(*s).push_back('\0');
  }
  return key;
}

}  // namespace tally::executor
