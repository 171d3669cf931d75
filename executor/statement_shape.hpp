#pragma once
// Statement texts that differ only in integer literals compared in WHERE or
// HAVING (`... HAVING sum(v) < -95377`, then `< -95378`): the second runs
// with a copy of the first's plan holding its own values (plan_constants.hpp),
// without a parse or an analysis of its own, which cost a new text ~150-250 us
// on the 2-core VM after a GROUP BY over a large table (cold caches) and ~25
// the same text again.
//
// Exact because: (1) the two texts lex to the same tokens but for the values
// of integer literals of the same class (digits only, <= 2^31-1: ICONST),
// and PostgreSQL's grammar reduces by token kinds, so their parse trees differ
// only in those A_Consts' values (and locations); (2) a literal that may
// differ is an operand of a comparison operator (<, <=, >, >=, =, <>) in
// WHERE or HAVING whose other operand is not a constant, and its plan holds
// it as exactly one constant, as written (int4) or widened to int8, which
// the binder does alike for every int4 value; every other literal must be
// equal in both texts. Anything the lexer here does not follow (E'' strings,
// dollar quotes, a number glued to a word) leaves the text to the parser.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct SelectPlan;

struct TextShape {
  // The text with each integer literal's digits replaced by '\x01'.
  std::string key;
  struct Literal {
    int location = 0;  // byte offset of its digits
    int64_t value = 0;  // the digits' value (0 .. 2^31-1)
    int minus = -1;     // byte offset of a '-' right before it (whitespace between), else -1
  };
  std::vector<Literal> literals;
};

// The shape of a text; nullopt when it has no integer literal or holds
// something this lexer leaves to the parser.
std::optional<TextShape> shape_of(std::string_view sql);

// Which literals of an analyzed SELECT (its SelectStmt body and plan) may take
// other values: per literal of `shape`, the plan's ConstExpr::literal_location
// to give the new value to (negated when the literal's A_Const is the
// negated one at its '-'), or -1 when it must stay as it is. Empty when none may.
struct ShapeSlot {
  int location = -1;
  bool negated = false;
};
std::vector<ShapeSlot> shape_slots(const TextShape& shape, const nlohmann::json& select_body, const SelectPlan& plan);

}  // namespace tally::executor
