#pragma once
// "{}"-placeholder formatting for code compiled by nvcc, whose front end
// cannot compile fmt 9's constexpr paths in C++20 mode (nvcc 13.0, fmt 9.1).
#include <sstream>
#include <string>
#include <string_view>

namespace tally::gpu {

namespace detail {
inline void format_rest(std::ostringstream& out, std::string_view f) { out << f; }
template <class T, class... Rest>
void format_rest(std::ostringstream& out, std::string_view f, const T& v, const Rest&... rest) {
  const size_t at = f.find("{}");
  if (at == std::string_view::npos) {
    out << f;
    return;
  }
  out << f.substr(0, at) << v;
  format_rest(out, f.substr(at + 2), rest...);
}
}  // namespace detail

template <class... Args>
std::string simple_format(std::string_view f, const Args&... args) {
  std::ostringstream out;
  detail::format_rest(out, f, args...);
  return out.str();
}

}  // namespace tally::gpu
