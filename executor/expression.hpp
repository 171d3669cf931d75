#pragma once
// Typed expression trees, evaluated vectorized: every node turns a whole batch
// of input rows into one Vector, so dispatch costs once per node per chunk and
// the inner loops run over native arrays. Built by the binder (binder.hpp)
// from libpg_query's parse tree, immutable afterwards.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/sql_type.hpp"
#include "executor/value.hpp"

namespace tally::executor {

// The rows an expression is evaluated over: column vectors of equal length
// (the scan's columns, or the aggregation's group keys and aggregate results),
// and the statement's bound parameters.
struct EvalInput {
  size_t rows = 0;
  std::vector<const Vector*> columns;
  const std::vector<Value>* parameters = nullptr;
};

class Expr {
 public:
  explicit Expr(SqlType type) : type(type) {}
  virtual ~Expr() = default;
  virtual Vector evaluate(const EvalInput& input) const = 0;
  // A constant (literal or parameter-free folded value) that needs no input.
  virtual bool is_constant() const { return false; }
  SqlType type;
};

using ExprPtr = std::unique_ptr<Expr>;

// Row-wise implementation of a scalar function or operator. The arguments
// arrive already cast to the function's parameter types.
using ScalarFunction = std::function<Value(std::span<const Value> args)>;

// Optional whole-Vector implementation of a strict function: fills `out`
// (of the function's type) for `rows` rows from the evaluated arguments and
// returns true, or returns false (before touching `out`) where the row-wise
// ScalarFunction must run instead.
using VectorKernel = std::function<bool(std::span<const Vector* const> args, size_t rows, Vector& out)>;

class ConstExpr final : public Expr {
 public:
  ConstExpr(SqlType type, Value value) : Expr(type), value(std::move(value)) {}
  Vector evaluate(const EvalInput& input) const override;
  bool is_constant() const override { return true; }
  Value value;
};

class ParamExpr final : public Expr {
 public:
  ParamExpr(SqlType type, int index) : Expr(type), index(index) {}
  Vector evaluate(const EvalInput& input) const override;
  int index;  // 0-based
};

class ColumnExpr final : public Expr {
 public:
  ColumnExpr(SqlType type, int index, std::string name = {})
      : Expr(type), index(index), name(std::move(name)) {}
  Vector evaluate(const EvalInput& input) const override;
  int index;
  std::string name;
};

// A function call with strict NULL handling (any NULL argument gives NULL)
// unless `strict` is false.
class FunctionExpr final : public Expr {
 public:
  FunctionExpr(SqlType type, std::string name, std::vector<ExprPtr> args, ScalarFunction fn,
               bool strict = true)
      : Expr(type), name(std::move(name)), args(std::move(args)), fn(std::move(fn)), strict(strict) {}
  Vector evaluate(const EvalInput& input) const override;
  std::string name;
  std::vector<ExprPtr> args;
  ScalarFunction fn;
  bool strict;
  VectorKernel batch;  // empty, or the same function over whole Vectors (strict only)
  // A LIKE of a constant pattern (args[0] LIKE like->pattern): what an
  // engine that matches texts itself needs (text_match.hpp).
  struct LikeConstant {
    std::string pattern;
    bool negate = false;
    bool case_insensitive = false;
  };
  std::shared_ptr<const LikeConstant> like;
  // The batch kernel takes a constant argument (a literal, a parameter, an
  // operator over them) as a one-row Vector standing for every row
  // (executor/vector_operand.hpp), so the constant is not copied per row.
  bool batch_takes_constants = false;
};

enum class BoolOp { and_, or_, not_ };
// SQL three-valued logic.
class BoolExpr final : public Expr {
 public:
  BoolExpr(BoolOp op, std::vector<ExprPtr> args)
      : Expr({TypeId::boolean}), op(op), args(std::move(args)) {}
  Vector evaluate(const EvalInput& input) const override;
  BoolOp op;
  std::vector<ExprPtr> args;
};

class NullTestExpr final : public Expr {
 public:
  NullTestExpr(ExprPtr arg, bool is_not) : Expr({TypeId::boolean}), arg(std::move(arg)), is_not(is_not) {}
  Vector evaluate(const EvalInput& input) const override;
  ExprPtr arg;
  bool is_not;
};

// CASE WHEN c THEN v ... ELSE e END (conditions evaluated lazily per row set).
class CaseExpr final : public Expr {
 public:
  CaseExpr(SqlType type, std::vector<std::pair<ExprPtr, ExprPtr>> whens, ExprPtr otherwise)
      : Expr(type), whens(std::move(whens)), otherwise(std::move(otherwise)) {}
  Vector evaluate(const EvalInput& input) const override;
  std::vector<std::pair<ExprPtr, ExprPtr>> whens;
  ExprPtr otherwise;  // may be null: NULL
};

class CoalesceExpr final : public Expr {
 public:
  CoalesceExpr(SqlType type, std::vector<ExprPtr> args) : Expr(type), args(std::move(args)) {}
  Vector evaluate(const EvalInput& input) const override;
  std::vector<ExprPtr> args;
};

// x [NOT] IN (list) with SQL NULL semantics.
class InListExpr final : public Expr {
 public:
  InListExpr(ExprPtr arg, std::vector<ExprPtr> list, bool negated)
      : Expr({TypeId::boolean}), arg(std::move(arg)), list(std::move(list)), negated(negated) {}
  Vector evaluate(const EvalInput& input) const override;
  ExprPtr arg;
  std::vector<ExprPtr> list;
  bool negated;
};

// A Vector of `rows` copies of one value.
Vector broadcast(SqlType type, const Value& value, size_t rows);
// Evaluates a constant expression (no columns) to one value.
Value evaluate_constant(const Expr& expr, const std::vector<Value>* parameters);

}  // namespace tally::executor
