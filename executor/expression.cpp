#include "executor/expression.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "common/error.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/per_code_evaluation.hpp"
#include "executor/text_column_builder.hpp"

namespace tally::executor {

Vector broadcast(SqlType type, const Value& value, size_t rows) {
  Vector out(type);
  out.resize(rows);
  if (is_null(value)) {
    out.nulls.assign(rows, 1);
    return out;
  }
  switch (physical_of(type.id)) {
    case Physical::boolean: std::fill(out.ints.begin(), out.ints.end(), std::get<bool>(value) ? 1 : 0); break;
    case Physical::integer: std::fill(out.ints.begin(), out.ints.end(), std::get<int64_t>(value)); break;
    case Physical::floating: std::fill(out.floats.begin(), out.floats.end(), std::get<double>(value)); break;
    case Physical::numeric: std::fill(out.numerics.begin(), out.numerics.end(), std::get<Numeric>(value)); break;
    case Physical::text: std::fill(out.texts.begin(), out.texts.end(), std::get<std::string>(value)); break;
    case Physical::interval: std::fill(out.intervals.begin(), out.intervals.end(), std::get<Interval>(value)); break;
  }
  return out;
}

Value evaluate_constant(const Expr& expr, const std::vector<Value>* parameters) {
  EvalInput input;
  input.rows = 1;
  input.parameters = parameters;
  return expr.evaluate(input).get(0);
}

Vector ConstExpr::evaluate(const EvalInput& input) const { return broadcast(type, value, input.rows); }

Vector ParamExpr::evaluate(const EvalInput& input) const {
  if (input.parameters == nullptr || index >= static_cast<int>(input.parameters->size())) {
    throw Error(SqlState::undefined_parameter, "there is no parameter $" + std::to_string(index + 1));
  }
  return broadcast(type, (*input.parameters)[static_cast<size_t>(index)], input.rows);
}

Vector ColumnExpr::evaluate(const EvalInput& input) const { return *input.columns.at(static_cast<size_t>(index)); }

namespace {

// An arithmetic operator whose operands are constants or parameters, at any
// depth (`date '1994-01-01' + interval '1' year`, `.06 - 0.01`): one value for
// every row. Operators only: a function of constants may be volatile
// (nextval('s'), random()) and must run once per row.
bool constant_operator(const Expr& e) {
  if (dynamic_cast<const ConstExpr*>(&e) != nullptr || dynamic_cast<const ParamExpr*>(&e) != nullptr) return true;
  const auto* f = dynamic_cast<const FunctionExpr*>(&e);
  if (f == nullptr || f->args.empty()) return false;
  if (f->name != "+" && f->name != "-" && f->name != "*" && f->name != "/") return false;
  for (const auto& a : f->args) {
    if (!constant_operator(*a)) return false;
  }
  return true;
}

}  // namespace

Vector FunctionExpr::evaluate(const EvalInput& input) const {
  // Computed on one row and repeated, not once per row of the chunk (a
  // filter's bound computed from literals); its errors are the same, as
  // they come from that one row.
  if (input.rows > 1 && constant_operator(*this)) {
    EvalInput one = input;
    one.rows = 1;
    return broadcast(type, evaluate(one).get(0), input.rows);
  }
  // A bare column argument is read where it is, not copied (a chunk's
  // column is megabytes; a scan's expressions read each several times). A
  // constant argument (a literal, a parameter, an operator over them) is
  // evaluated as one row that stands for every row: a pattern is not copied
  // a million times.
  const size_t rows = input.rows;
  std::vector<Vector> evaluated;
  evaluated.reserve(args.size());  // no reallocation: `values` points into it
  std::vector<const Vector*> values(args.size());
  const auto one_row = std::make_unique<bool[]>(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    if (const auto* column = dynamic_cast<const ColumnExpr*>(args[a].get())) {
      values[a] = input.columns.at(static_cast<size_t>(column->index));
    } else if (rows > 1 && constant_operator(*args[a])) {
      EvalInput one = input;
      one.rows = 1;
      evaluated.push_back(args[a]->evaluate(one));
      values[a] = &evaluated.back();
      one_row[a] = true;
    } else {
      evaluated.push_back(args[a]->evaluate(input));
      values[a] = &evaluated.back();
    }
  }
  // A whole-Vector kernel has its own way with coded input (a comparison
  // tests each dictionary entry once); a row-wise function runs per code.
  if (!batch) {
    if (auto per_code = evaluate_per_code(*this, values, {one_row.get(), args.size()}, rows)) return std::move(*per_code);
  }
  Vector out(type);
  if (batch && strict) {
    if (!batch_takes_constants) {
      // This kernel reads every argument at every row.
      for (size_t a = 0; a < args.size(); ++a) {
        if (!one_row[a]) continue;
        const auto at = static_cast<size_t>(values[a] - evaluated.data());
        evaluated[at] = broadcast(args[a]->type, evaluated[at].get(0), rows);
        one_row[a] = false;
      }
    }
    if (batch(values, rows, out)) return out;
  }
  out.resize(rows);
  std::vector<Value> row(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    if (one_row[a]) row[a] = values[a]->get(0);
  }
  for (size_t r = 0; r < rows; ++r) {
    bool any_null = false;
    for (size_t a = 0; a < args.size(); ++a) {
      // A text argument is copied into the string the row held before: no
      // allocation per row (the host's one malloc arena serializes them).
      if (!one_row[a]) values[a]->get_into(r, row[a]);
      any_null |= is_null(row[a]);
    }
    if (strict && any_null) {
      out.set_null(r);
      continue;
    }
    out.set(r, fn(row));
  }
  return out;
}

Vector BoolExpr::evaluate(const EvalInput& input) const {
  Vector out({TypeId::boolean});
  out.resize(input.rows);
  if (op == BoolOp::not_) {
    Vector v = args[0]->evaluate(input);
    for (size_t r = 0; r < input.rows; ++r) {
      if (v.null_at(r)) out.set_null(r); else out.ints[r] = v.ints[r] ? 0 : 1;
    }
    return out;
  }
  // AND: false dominates, then NULL; OR: true dominates, then NULL.
  const int64_t dominant = op == BoolOp::and_ ? 0 : 1;
  std::vector<uint8_t> state(input.rows, 2);  // 2 = neutral so far, 3 = NULL seen, 4 = decided
  uint8_t* st = state.data();
  // Each argument is evaluated only on the rows the ones before it left
  // undecided, as PostgreSQL stops at the first false conjunct of a row:
  // `k <> 0 AND 100 / k > 1` never divides by zero, and a selective first
  // conjunct leaves the others a fraction of the rows. `open` maps the
  // narrowed input's rows to the input's (all rows while none is decided).
  std::vector<uint32_t> open;
  bool narrowed = false;
  EvalInput subset;
  std::vector<Vector> subset_columns;
  for (size_t i = 0; i < args.size(); ++i) {
    const EvalInput& in = narrowed ? subset : input;
    const Vector v = args[i]->evaluate(in);
    const int64_t* values = v.ints.data();
    const uint8_t* nulls = v.nulls.empty() ? nullptr : v.nulls.data();
    // Branch-free where no row is narrowed away (a filter's first conjunct
    // runs over whole chunks): a NULL raises the state to 3 unless decided,
    // a dominant value decides it.
    if (!narrowed && nulls == nullptr) {
      for (size_t r = 0; r < in.rows; ++r) st[r] = values[r] == dominant ? uint8_t{4} : st[r];
    } else {
      for (size_t k = 0; k < in.rows; ++k) {
        const size_t r = narrowed ? open[k] : k;
        const uint8_t raised = st[r] == 4 ? uint8_t{4} : uint8_t{3};
        st[r] = nulls != nullptr && nulls[k] != 0 ? raised : (values[k] == dominant ? uint8_t{4} : st[r]);
      }
    }
    if (i + 1 == args.size()) break;
    std::vector<uint32_t> undecided;
    undecided.reserve(in.rows);
    for (size_t k = 0; k < in.rows; ++k) {
      const auto r = static_cast<uint32_t>(narrowed ? open[k] : k);
      if (st[r] != 4) undecided.push_back(r);
    }
    if (undecided.size() == in.rows) continue;
    open = std::move(undecided);
    narrowed = true;
    if (open.empty()) break;
    std::vector<Expr*> later;
    for (size_t j = i + 1; j < args.size(); ++j) later.push_back(args[j].get());
    subset = narrowed_input(input, open, later, subset_columns);
  }
  bool any_null = false;
  for (size_t r = 0; r < input.rows; ++r) {
    out.ints[r] = st[r] == 4 ? dominant : 1 - dominant;
    any_null |= st[r] == 3;
  }
  if (any_null) {
    out.nulls.assign(input.rows, 0);
    for (size_t r = 0; r < input.rows; ++r) out.nulls[r] = static_cast<uint8_t>(st[r] == 3);
  }
  return out;
}

Vector NullTestExpr::evaluate(const EvalInput& input) const {
  Vector v = arg->evaluate(input);
  Vector out({TypeId::boolean});
  out.resize(input.rows);
  for (size_t r = 0; r < input.rows; ++r) out.ints[r] = (v.null_at(r) != is_not) ? 1 : 0;
  return out;
}

namespace {

// The rows a CASE or COALESCE writes: text into a TextColumnBuilder (no
// string per row), other types into the Vector itself.
class BranchRows {
 public:
  BranchRows(SqlType type, size_t rows) {
    if (physical_of(type.id) == Physical::text) {
      text_.emplace(type, rows);
    } else {
      out_ = Vector(type);
      out_.resize(rows);
    }
  }
  void set_from(size_t i, const Vector& from, size_t j) {
    if (text_) text_->set_from(i, from, j);
    else out_.set_from(i, from, j);
  }
  void set(size_t i, const Value& v) {
    if (!text_) out_.set(i, v);
    else if (is_null(v)) text_->set_null(i);
    else text_->set(i, std::get<std::string>(v));
  }
  void set_null(size_t i) {
    if (text_) text_->set_null(i);
    else out_.set_null(i);
  }
  Vector finish() { return text_ ? text_->finish() : std::move(out_); }

 private:
  std::optional<TextColumnBuilder> text_;
  Vector out_;
};

}  // namespace

Vector CaseExpr::evaluate(const EvalInput& input) const {
  BranchRows out(type, input.rows);
  std::vector<uint8_t> done(input.rows, 0);
  // Each branch value is evaluated over all rows; errors from branches not
  // taken are possible in principle, so a value's error is only raised for
  // rows that select it (rows are re-evaluated one at a time on error).
  auto fill = [&](const Expr* value_expr, const std::vector<uint8_t>& take) {
    Vector v;
    bool whole = true;
    try {
      v = value_expr ? value_expr->evaluate(input) : broadcast(type, Null{}, input.rows);
    } catch (const Error&) {
      whole = false;
    }
    for (size_t r = 0; r < input.rows; ++r) {
      if (!take[r]) continue;
      if (whole) {
        out.set_from(r, v, r);
      } else {
        EvalInput one;
        one.rows = 1;
        one.parameters = input.parameters;
        // Columns the expression does not read are null in the input, or
        // empty (a scan's columns it did not read): they stay unread in the
        // one-row input.
        std::vector<Vector> cols(input.columns.size());
        for (size_t i = 0; i < input.columns.size(); ++i) {
          const Vector* c = input.columns[i] != nullptr && r < input.columns[i]->size() ? input.columns[i] : nullptr;
          if (c != nullptr) {
            cols[i] = Vector(c->type);
            cols[i].push(c->get(r));
          }
          one.columns.push_back(c != nullptr ? &cols[i] : nullptr);
        }
        out.set(r, value_expr->evaluate(one).get(0));
      }
    }
  };
  for (const auto& [condition, value] : whens) {
    Vector c = condition->evaluate(input);
    std::vector<uint8_t> take(input.rows, 0);
    bool any = false;
    for (size_t r = 0; r < input.rows; ++r) {
      if (!done[r] && !c.null_at(r) && c.ints[r]) { take[r] = 1; done[r] = 1; any = true; }
    }
    if (any) fill(value.get(), take);
  }
  std::vector<uint8_t> rest(input.rows, 0);
  bool any = false;
  for (size_t r = 0; r < input.rows; ++r) {
    if (!done[r]) { rest[r] = 1; any = true; }
  }
  if (any) fill(otherwise.get(), rest);
  return out.finish();
}

Vector CoalesceExpr::evaluate(const EvalInput& input) const {
  BranchRows out(type, input.rows);
  std::vector<uint8_t> done(input.rows, 0);
  size_t remaining = input.rows;
  for (const auto& arg : args) {
    if (remaining == 0) break;
    Vector v = arg->evaluate(input);
    for (size_t r = 0; r < input.rows; ++r) {
      if (!done[r] && !v.null_at(r)) { out.set_from(r, v, r); done[r] = 1; --remaining; }
    }
  }
  for (size_t r = 0; r < input.rows; ++r) {
    if (!done[r]) out.set_null(r);
  }
  return out.finish();
}

namespace {

// Items beyond which a list of constants is looked up in a hash set rather
// than compared item by item.
constexpr size_t kHashedItems = 8;

bool constant_item(const Expr& e) {
  return dynamic_cast<const ConstExpr*>(&e) != nullptr || dynamic_cast<const ParamExpr*>(&e) != nullptr;
}

// x [NOT] IN (constants) for integer-like and text values, whose equality
// (compare_values) is equality of the int64 or of the bytes: each constant
// evaluated once (not broadcast to every row), each row compared as it is
// held (TPC-H Q22's substring(c_phone, 1, 2) IN seven codes, Q12's
// l_shipmode IN two).
Vector in_constant_list(const Vector& v, const std::vector<ExprPtr>& list, bool negated, const EvalInput& input) {
  const bool text = physical_of(v.type.id) == Physical::text;
  std::vector<int64_t> ints;
  std::vector<std::string> texts;
  bool saw_null = false;
  EvalInput one;
  one.rows = 1;
  one.parameters = input.parameters;
  for (const auto& item : list) {
    const Value x = item->evaluate(one).get(0);
    if (is_null(x)) saw_null = true;
    else if (text) texts.push_back(std::get<std::string>(x));
    else ints.push_back(std::holds_alternative<bool>(x) ? (std::get<bool>(x) ? 1 : 0) : std::get<int64_t>(x));
  }
  const bool hashed = list.size() > kHashedItems;
  std::unordered_set<int64_t> int_set;
  std::unordered_set<std::string_view> text_set;
  if (hashed) {
    int_set.insert(ints.begin(), ints.end());
    text_set.insert(texts.begin(), texts.end());
  }
  auto has_text = [&](std::string_view x) {
    if (hashed) return text_set.count(x) != 0;
    // Length and first byte before the bytes: most items differ there
    // (seven two-digit codes tested for every customer's phone prefix).
    return std::any_of(texts.begin(), texts.end(), [&](const std::string& t) {
      return t.size() == x.size() && (t.empty() || (t[0] == x[0] && std::memcmp(t.data(), x.data(), t.size()) == 0));
    });
  };
  auto has_int = [&](int64_t x) {
    if (hashed) return int_set.count(x) != 0;
    return std::find(ints.begin(), ints.end(), x) != ints.end();
  };
  Vector out({TypeId::boolean});
  out.resize(input.rows);
  const int64_t* values = text ? nullptr : v.int_data();
  // A coded column (a stored text, an aggregate's text key) whose
  // dictionary has at most half as many entries as there are rows is
  // looked up once per entry (a container among 40 over 200,000 parts).
  std::vector<uint8_t> member;
  if (text && v.coded() && 2 * static_cast<size_t>(v.dictionary->size()) <= input.rows) {
    member.resize(static_cast<size_t>(v.dictionary->size()));
    for (size_t code = 0; code < member.size(); ++code) member[code] = has_text(v.dictionary->at(static_cast<int32_t>(code)));
  }
  for (size_t r = 0; r < input.rows; ++r) {
    if (v.null_at(r)) { out.set_null(r); continue; }
    const bool found = !member.empty() ? member[static_cast<size_t>(v.codes[r])] != 0
                       : text          ? has_text(v.coded() ? v.text_at(r) : std::string_view(v.texts[r]))
                                       : has_int(values[r]);
    if (found) out.ints[r] = negated ? 0 : 1;
    else if (saw_null) out.set_null(r);
    else out.ints[r] = negated ? 1 : 0;
  }
  return out;
}

}  // namespace

Vector InListExpr::evaluate(const EvalInput& input) const {
  Vector v = arg->evaluate(input);
  const Physical physical = physical_of(arg->type.id);
  const bool hashable = physical == Physical::integer || physical == Physical::boolean || physical == Physical::text;
  if (hashable && v.avg_parts == nullptr && std::all_of(list.begin(), list.end(), [&](const ExprPtr& item) {
        return constant_item(*item) && physical_of(item->type.id) == physical;
      })) {
    return in_constant_list(v, list, negated, input);
  }
  std::vector<Vector> items;
  for (const auto& item : list) items.push_back(item->evaluate(input));
  Vector out({TypeId::boolean});
  out.resize(input.rows);
  for (size_t r = 0; r < input.rows; ++r) {
    if (v.null_at(r)) { out.set_null(r); continue; }
    const Value x = v.get(r);
    bool found = false, saw_null = false;
    for (const auto& item : items) {
      if (item.null_at(r)) { saw_null = true; continue; }
      if (compare_values(x, item.get(r)) == 0) { found = true; break; }
    }
    if (found) out.ints[r] = negated ? 0 : 1;
    else if (saw_null) out.set_null(r);
    else out.ints[r] = negated ? 1 : 0;
  }
  return out;
}

}  // namespace tally::executor
