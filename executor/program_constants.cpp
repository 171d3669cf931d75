#include "executor/program_constants.hpp"

#include "common/ascii_case.hpp"
#include "common/column_program.hpp"
#include "common/error.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {

std::optional<Value> constant_of(const Expr& e, const std::vector<Value>* parameters) {
  if (!foldable(e)) return std::nullopt;
  try {
    return evaluate_constant(e, parameters);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<std::string> constant_word(const Expr& e, const std::vector<Value>* parameters) {
  const std::optional<Value> v = constant_of(e, parameters);
  const auto* text = v ? std::get_if<std::string>(&*v) : nullptr;
  if (text == nullptr) return std::nullopt;
  return ascii_lower(*text);
}

std::optional<int64_t> trunc_micros(const std::string& unit) {
  if (unit == "second") return int64_t{1000000};
  if (unit == "minute") return int64_t{60000000};
  if (unit == "hour") return int64_t{3600000000};
  if (unit == "day") return program_detail::kMicrosPerDay;
  return std::nullopt;
}

std::optional<std::string> extract_whole_field(const FunctionExpr& f, const std::vector<Value>* parameters) {
  if (f.name != "extract" || f.args.size() != 2) return std::nullopt;
  auto unit = constant_word(*f.args[0], parameters);
  if (!unit || !extract_step(*unit, 1)) return std::nullopt;
  return unit;
}

}  // namespace tally::executor
