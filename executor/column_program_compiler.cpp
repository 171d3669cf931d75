#include "executor/column_program_compiler.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "common/ascii_case.hpp"
#include "common/error.hpp"
#include "executor/dictionary_entry_values.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/program_constants.hpp"
#include "executor/lookup_join.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {

int ProgramColumnMap::add(int table_column) {
  const auto it = std::find(table_columns.begin(), table_columns.end(), table_column);
  if (it != table_columns.end()) return static_cast<int>(it - table_columns.begin());
  table_columns.push_back(table_column);
  return static_cast<int>(table_columns.size()) - 1;
}

int ProgramColumnMap::add_lookup(const LookupColumn& column) {
  for (size_t i = 0; i < lookups.size(); ++i) {
    const LookupColumn& l = lookups[i];
    if (l.column.data == column.column.data && l.column.validity == column.column.validity && l.keys == column.keys &&
        l.text == column.text)
      return static_cast<int>(i);
  }
  lookups.push_back(column);
  return static_cast<int>(lookups.size()) - 1;
}

void place_lookups(ColumnProgram& program, const ProgramColumnMap& columns) {
  for (ProgramStep& step : program.steps) {
    if (step.op == ProgramOp::lookup) step.arg += static_cast<int32_t>(columns.table_columns.size());
  }
}

namespace {

// Text conditions over kTextConditionEntries entries at most compile as
// tests of at most this many codes (each a program step), or else as a
// lookup of the verdict by code.
constexpr size_t kTextConditionCodes = 64;

// The static type of a compiled subexpression.
enum class Kind { integer, numeric, floating, boolean };
struct Typed {
  Kind kind = Kind::integer;
  int32_t scale = 0;  // numeric
};

bool int_kind(Kind k) { return k != Kind::floating; }

// Bits of an integer type's range (int2/int4/int8), 0 for others.
int int_bits(TypeId id) {
  switch (id) {
    case TypeId::int2: return 16;
    case TypeId::int4: return 32;
    case TypeId::int8: return 64;
    default: return 0;
  }
}


class Compiler {
 public:
  Compiler(ProgramColumnMap& columns, const std::vector<Value>* parameters) : columns_(columns), parameters_(parameters) {}

  std::optional<Typed> compile(const Expr& e) {
    if (foldable(e)) return constant(e);
    if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) return column(*c);
    if (const auto* l = dynamic_cast<const LookupExpr*>(&e)) return lookup(*l);
    if (e.type.id == TypeId::boolean) {
      if (auto t = text_condition(e)) return t;
    } else if (auto t = text_value(e)) {
      return t;
    }
    if (const auto* c = dynamic_cast<const CaseExpr*>(&e)) return case_expr(*c);
    if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) return function(*f);
    if (const auto* b = dynamic_cast<const BoolExpr*>(&e)) {
      if (b->args.empty()) return std::nullopt;
      for (size_t i = 0; i < b->args.size(); ++i) {
        // AND and OR skip the right operand where the left decides.
        const size_t skip = steps.size();
        if (i > 0) emit(b->op == BoolOp::and_ ? ProgramOp::skip_if_false : ProgramOp::skip_if_true);
        const auto t = compile(*b->args[i]);
        if (!t || t->kind != Kind::boolean) return std::nullopt;
        if (b->op == BoolOp::not_) {
          if (b->args.size() != 1) return std::nullopt;
          emit(ProgramOp::not_);
        } else if (i > 0) {
          emit(b->op == BoolOp::and_ ? ProgramOp::and_ : ProgramOp::or_);
          steps[skip].arg = static_cast<int32_t>(steps.size() - skip - 1);
        }
      }
      return Typed{Kind::boolean};
    }
    if (const auto* n = dynamic_cast<const NullTestExpr*>(&e)) {
      if (!compile(*n->arg)) return std::nullopt;
      emit(n->is_not ? ProgramOp::is_not_null : ProgramOp::is_null);
      return Typed{Kind::boolean};
    }
    if (const auto* in = dynamic_cast<const InListExpr*>(&e)) {
      if (in->list.empty()) return std::nullopt;
      if (integer_in_list(*in)) return Typed{Kind::boolean};
      // x IN (a, b) is x = a OR x = b, NULLs included.
      for (size_t i = 0; i < in->list.size(); ++i) {
        if (!comparison("=", *in->arg, *in->list[i])) return std::nullopt;
        if (i > 0) emit(ProgramOp::or_);
      }
      if (in->negated) emit(ProgramOp::not_);
      return Typed{Kind::boolean};
    }
    return std::nullopt;
  }

  // A text key's codes: a stored column's load, or a lookup of a joined
  // relation's column held as one dictionary's codes.
  bool text_key(const Expr& e, std::shared_ptr<const storage::StringDictionary>& dictionary) {
    if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) {
      if (!columns_.dictionary || c->index < 0) return false;
      dictionary = columns_.dictionary(c->index);
      if (!dictionary) return false;
      emit(ProgramOp::load, columns_.add(c->index));
      return true;
    }
    if (const auto* c = dynamic_cast<const CaseExpr*>(&e)) return case_text_key(*c, dictionary);
    const auto* l = dynamic_cast<const LookupExpr*>(&e);
    if (l == nullptr) return derived_text_key(e, dictionary);
    if (l->column < 0) return false;
    if (columns_.lookups_unbuilt) {
      const auto key = compile(*l->key);
      if (!key || key->kind != Kind::integer) return false;
      emit(ProgramOp::lookup, 0);
      emit(ProgramOp::lookup, 0);
      return true;
    }
    LookupTable& table = l->set->table(l->table);
    const LookupColumn rows = lookup_rows_column(table);
    const std::optional<ProgramColumn> codes = lookup_text_codes_column(table, l->column, dictionary);
    if (!codes) return false;
    const auto key = compile(*l->key);
    if (!key || key->kind != Kind::integer) return false;
    emit(ProgramOp::lookup, columns_.add_lookup(rows));
    emit(ProgramOp::lookup, columns_.add_lookup(LookupColumn{*codes}));
    return true;
  }

  // CASE WHEN ... THEN a text column ELSE a text END as a key (ClickBench's
  // referer where no search engine led to the page, else ''): the column's
  // codes where it is chosen, the constant's code in that column's
  // dictionary elsewhere. Every value is the one column, a text its
  // dictionary holds, or NULL.
  bool case_text_key(const CaseExpr& c, std::shared_ptr<const storage::StringDictionary>& dictionary) {
    const ColumnExpr* column = nullptr;
    std::vector<const Expr*> values;
    for (const auto& [when, then] : c.whens) values.push_back(then.get());
    if (c.otherwise) values.push_back(c.otherwise.get());
    for (const Expr* v : values) {
      if (foldable(*v)) continue;
      const ColumnExpr* read = stored_text_column(v);
      if (read == nullptr || read->index < 0 || (column != nullptr && read->index != column->index)) return false;
      column = read;
    }
    dictionary = column && columns_.dictionary ? columns_.dictionary(column->index) : nullptr;
    if (!dictionary) return false;
    auto value = [&](const Expr& v) {
      const std::optional<Value> constant = constant_of(v, parameters_);
      const auto* text = constant ? std::get_if<std::string>(&*constant) : nullptr;
      const int32_t code = text ? dictionary->find(*text) : -1;
      if (!foldable(v)) emit(ProgramOp::load, columns_.add(column->index));
      else if (constant && is_null(*constant)) emit(ProgramOp::const_null);
      else if (code >= 0) emit(ProgramOp::const_int, 0, code);
      else return false;
      return true;
    };
    for (const auto& [when, then] : c.whens) {
      const auto w = compile(*when);
      if (!w || w->kind != Kind::boolean || !value(*then)) return false;
    }
    if (c.otherwise) {
      if (!value(*c.otherwise)) return false;
    } else {
      emit(ProgramOp::const_null);
    }
    for (size_t i = 0; i < c.whens.size(); ++i) emit(ProgramOp::choose);
    return true;
  }

  // A text key computed from one text column (regexp_replace(Referer, ...)):
  // evaluated once per entry of the column's dictionary, the results coded
  // in a dictionary of their own, and each row's code mapped to its
  // result's. Only where a NULL value gives NULL, as the lookup of a NULL
  // code does.
  bool derived_text_key(const Expr& e, std::shared_ptr<const storage::StringDictionary>& dictionary) {
    std::shared_ptr<const storage::StringDictionary> source;
    const ColumnExpr* column = single_text_column(e, source);
    if (column == nullptr || source->size() > kMostEvaluatedEntries) return false;
    if (columns_.lookups_unbuilt) {
      unbuilt_entry_lookup(*column);
      return true;
    }
    std::optional<EntryLookup> by_code = entry_text_codes(e, *column, source, parameters_, columns_.threads);
    if (!by_code) return false;
    dictionary = by_code->codes;
    emit(ProgramOp::load, columns_.add(column->index));
    emit(ProgramOp::lookup, add_entry_lookup(std::move(*by_code)));
    return true;
  }

  // While lookups are unbuilt (a plan's choice), a lookup by the column's
  // codes stands for the values per entry, not evaluated.
  void unbuilt_entry_lookup(const ColumnExpr& column) {
    emit(ProgramOp::load, columns_.add(column.index));
    emit(ProgramOp::lookup, 0);
  }

  // A lookup column of values by dictionary code; its arrays go with the map.
  int add_entry_lookup(EntryLookup&& by_code) {
    for (auto& array : by_code.arrays) columns_.arrays.push_back(std::move(array));
    return columns_.add_lookup(LookupColumn{by_code.column});
  }

  std::vector<ProgramStep> steps;
  int depth = 0, max_depth = 0;

 private:
  void emit(ProgramOp op, int32_t arg = 0, int64_t value = 0, double fvalue = 0) {
    steps.push_back(ProgramStep{op, arg, value, fvalue});
    depth += step_stack_change(op);
    max_depth = std::max(max_depth, depth);
  }

  std::optional<Typed> constant(const Expr& e) {
    const std::optional<Value> found = constant_of(e, parameters_);
    if (!found) return std::nullopt;
    const Value& v = *found;
    const TypeId id = e.type.id;
    if (is_null(v)) {
      emit(ProgramOp::const_null);
      if (id == TypeId::boolean) return Typed{Kind::boolean};
      if (is_float(id)) return id == TypeId::float8 ? std::optional<Typed>(Typed{Kind::floating}) : std::nullopt;
      if (id == TypeId::numeric) return Typed{Kind::numeric, 0};
      if (int_bits(id) || id == TypeId::date || id == TypeId::timestamp || id == TypeId::timestamptz || id == TypeId::time) return Typed{};
      return std::nullopt;
    }
    if (const auto* b = std::get_if<bool>(&v)) {
      emit(ProgramOp::const_int, 0, *b ? 1 : 0);
      return Typed{Kind::boolean};
    }
    if (const auto* i = std::get_if<int64_t>(&v)) {
      if (id == TypeId::boolean) {
        emit(ProgramOp::const_int, 0, *i != 0 ? 1 : 0);
        return Typed{Kind::boolean};
      }
      if (!int_bits(id) && id != TypeId::date && id != TypeId::timestamp && id != TypeId::timestamptz && id != TypeId::time) return std::nullopt;
      emit(ProgramOp::const_int, 0, *i);
      return Typed{};
    }
    if (const auto* d = std::get_if<double>(&v)) {
      if (id != TypeId::float8) return std::nullopt;
      emit(ProgramOp::const_float, 0, 0, *d);
      return Typed{Kind::floating};
    }
    if (const auto* n = std::get_if<Numeric>(&v)) {
      if (n->is_infinite() || n->scale < 0 || n->scale > 30 || n->mantissa > INT64_MAX || n->mantissa < INT64_MIN) {
        return std::nullopt;
      }
      emit(ProgramOp::const_int, 0, static_cast<int64_t>(n->mantissa));
      return Typed{Kind::numeric, n->scale};
    }
    return std::nullopt;
  }

  std::optional<Typed> column(const ColumnExpr& c) {
    const TypeId id = c.type.id;
    Typed t;
    if (id == TypeId::boolean) t.kind = Kind::boolean;
    else if (int_bits(id) || id == TypeId::date || id == TypeId::timestamp || id == TypeId::timestamptz || id == TypeId::time) t.kind = Kind::integer;
    else if (id == TypeId::float8 || id == TypeId::float4) t.kind = Kind::floating;
    else if (id == TypeId::numeric && c.type.typmod >= 4 && c.type.numeric_precision() <= 18) {
      t = Typed{Kind::numeric, c.type.numeric_scale()};  // stored as int64 at its declared scale
    } else {
      return std::nullopt;
    }
    emit(ProgramOp::load, columns_.add(c.index));
    return t;
  }

  // CASE WHEN c1 THEN v1 ... ELSE e END as c1 v1 ... e, then a choose per
  // WHEN, innermost first. Every value is of one kind (numerics of one
  // scale: the result's scale is then the same on every row); a NULL takes
  // any kind.
  std::optional<Typed> case_expr(const CaseExpr& c) {
    if (c.whens.empty()) return std::nullopt;
    std::optional<Typed> kind;
    auto value = [&](const Expr& v) {
      const size_t mark = steps.size();
      const auto t = compile(v);
      if (!t) return false;
      if (steps.size() == mark + 1 && steps.back().op == ProgramOp::const_null) return true;
      if (!kind) kind = t;
      return kind->kind == t->kind && kind->scale == t->scale;
    };
    for (const auto& [when, then] : c.whens) {
      const auto w = compile(*when);
      if (!w || w->kind != Kind::boolean || !value(*then)) return std::nullopt;
    }
    if (c.otherwise) {
      if (!value(*c.otherwise)) return std::nullopt;
    } else {
      emit(ProgramOp::const_null);
    }
    if (!kind) return std::nullopt;  // every value NULL: its type decides nothing here
    for (size_t i = 0; i < c.whens.size(); ++i) emit(ProgramOp::choose);
    return kind;
  }

  // The stored text column that `e` reads, where it reads no other column
  // and runs no subquery or volatile function, and the compiler knows the
  // column's dictionary: `e` can then be evaluated once per entry.
  const ColumnExpr* single_text_column(const Expr& e, std::shared_ptr<const storage::StringDictionary>& dictionary) {
    if (!columns_.dictionary) return nullptr;
    std::set<int> refs;
    collect_refs(const_cast<Expr&>(e), refs);
    if (refs.size() != 1) return nullptr;
    const ColumnExpr* column = find_column(e);
    if (column == nullptr || physical_of(column->type.id) != Physical::text || column->index < 0) return nullptr;
    if (has_subquery(const_cast<Expr&>(e)) || has_volatile_function(const_cast<Expr&>(e))) return nullptr;
    dictionary = columns_.dictionary(column->index);
    return dictionary ? column : nullptr;
  }

  // A condition that reads one text column of the table (l_shipmode IN
  // ('MAIL', 'SHIP'), p_type LIKE 'PROMO%', URL <> ''). Over a large
  // dictionary an equality with constants compares codes, and a LIKE the
  // engine matches is its verdict by code (text_match). Otherwise the
  // condition is evaluated here once per entry of the column's dictionary,
  // and compiled as the stored codes' test against the entries that pass
  // (or, when most pass, against those that do not), or as the verdict by
  // code, looked up. Only where it answers NULL for a NULL value and true
  // or false for every entry, as that test does.
  std::optional<Typed> text_condition(const Expr& e) {
    std::shared_ptr<const storage::StringDictionary> dictionary;
    const ColumnExpr* column = single_text_column(e, dictionary);
    if (column == nullptr) return std::nullopt;
    if (dictionary->size() > kTextConditionEntries) {
      if (auto t = text_equality(e, *column, *dictionary)) return t;
      if (auto t = text_match(e, *column, dictionary)) return t;
      if (dictionary->size() > kMostEvaluatedEntries) return std::nullopt;
    }
    if (columns_.lookups_unbuilt) {
      unbuilt_entry_lookup(*column);
      return passes_verdict();
    }
    std::optional<EntryLookup> by_code = entry_verdicts(e, *column, dictionary, parameters_, columns_.threads);
    if (!by_code) return std::nullopt;
    const auto n = static_cast<size_t>(dictionary->size());
    const auto* verdicts = static_cast<const int32_t*>(by_code->column.data);
    std::vector<int64_t> pass, fail;
    for (size_t i = 0; i < n; ++i) {
      std::vector<int64_t>& side = verdicts[i] != 0 ? pass : fail;
      if (side.size() <= kTextConditionCodes) side.push_back(static_cast<int64_t>(i));
    }
    const bool negate = pass.size() > fail.size();
    const std::vector<int64_t>& codes = negate ? fail : pass;
    if (codes.size() <= kTextConditionCodes) return code_test(*column, codes, negate);
    // Too many codes to list: the verdict by code, looked up (1 = passes).
    emit(ProgramOp::load, columns_.add(column->index));
    emit(ProgramOp::lookup, add_entry_lookup(std::move(*by_code)));
    return passes_verdict();
  }

  Typed passes_verdict() {
    emit(ProgramOp::const_int, 0, 1);
    emit(ProgramOp::eq_int);
    return Typed{Kind::boolean};
  }

  // Whether the column's code is one of `codes` (ascending), or, negated, none.
  Typed code_test(const ColumnExpr& column, const std::vector<int64_t>& codes, bool negate) {
    emit(ProgramOp::load, columns_.add(column.index));
    emit(ProgramOp::in_list, static_cast<int32_t>(codes.size()));
    for (const int64_t code : codes) steps.push_back(ProgramStep{ProgramOp::const_int, 0, code, 0});  // data: no depth
    if (negate) emit(ProgramOp::not_);
    return Typed{Kind::boolean};
  }

  // A text or varchar column's equality with constant texts (URL <> '',
  // SearchPhrase IN ('a', 'b')): the stored codes compared with the
  // constants' codes. A text the dictionary lacks takes code -1, which no
  // row holds. Not for a NULL constant (the host path's NULLs).
  std::optional<Typed> text_equality(const Expr& e, const ColumnExpr& column,
                                     const storage::StringDictionary& dictionary) {
    const std::optional<TextEqualityShape> shape = text_equality_shape(e);
    if (!shape || shape->column != &column) return std::nullopt;
    std::vector<int64_t> codes;
    for (const Expr* constant : shape->values) {
      if (physical_of(constant->type.id) != Physical::text) return std::nullopt;
      const std::optional<Value> v = constant_of(*constant, parameters_);
      const auto* text = v ? std::get_if<std::string>(&*v) : nullptr;
      if (text == nullptr) return std::nullopt;
      codes.push_back(dictionary.find(*text));
    }
    std::sort(codes.begin(), codes.end());
    codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
    return code_test(column, codes, shape->negated);
  }

  // An integer or float8 value of one text column (length(URL),
  // strpos(URL, 'google') > 0 is a condition): evaluated once per entry of
  // the column's dictionary, and looked up by the row's code. Only where a
  // NULL value gives NULL, as the lookup of a NULL code does.
  std::optional<Typed> text_value(const Expr& e) {
    const TypeId id = e.type.id;
    if ((!int_bits(id) && id != TypeId::float8) || dynamic_cast<const ColumnExpr*>(&e) != nullptr) return std::nullopt;
    std::shared_ptr<const storage::StringDictionary> dictionary;
    const ColumnExpr* column = single_text_column(e, dictionary);
    if (column == nullptr || dictionary->size() > kMostEvaluatedEntries) return std::nullopt;
    if (columns_.lookups_unbuilt) {
      unbuilt_entry_lookup(*column);
    } else {
      std::optional<EntryLookup> by_code = entry_values(e, *column, dictionary, parameters_, columns_.threads);
      if (!by_code) return std::nullopt;
      emit(ProgramOp::load, columns_.add(column->index));
      emit(ProgramOp::lookup, add_entry_lookup(std::move(*by_code)));
    }
    return Typed{id == TypeId::float8 ? Kind::floating : Kind::integer};
  }

  // A LIKE of a constant pattern over a column of more entries than the
  // compiler evaluates here (text_condition): the verdict by code, made
  // where the programs run, looked up (the GPU matches the dictionary's
  // bytes it keeps; text_match.hpp says which patterns).
  std::optional<Typed> text_match(const Expr& e, const ColumnExpr& column,
                                  const std::shared_ptr<const storage::StringDictionary>& dictionary) {
    const auto* f = dynamic_cast<const FunctionExpr*>(&e);
    if (!columns_.texts_on_device || f == nullptr || !f->like || f->like->case_insensitive || f->args.size() != 1 ||
        !same_bytes(*f->args[0], column)) {
      return std::nullopt;
    }
    const std::optional<RunsPattern> pattern = runs_pattern(f->like->pattern);
    if (!pattern) return std::nullopt;
    auto verdicts = std::make_shared<TextVerdicts>();
    verdicts->entries = storage::dictionary_entries(dictionary);
    verdicts->count = dictionary->size();
    verdicts->pattern = *pattern;
    LookupColumn by_code;
    by_code.column = ProgramColumn{nullptr, nullptr, static_cast<uint8_t>(ColumnWidth::int32), 0,
                                   static_cast<uint64_t>(verdicts->count)};
    by_code.text = std::move(verdicts);
    emit(ProgramOp::load, columns_.add(column.index));
    emit(ProgramOp::lookup, columns_.add_lookup(by_code));
    emit(ProgramOp::const_int, 0, f->like->negate ? 0 : 1);
    emit(ProgramOp::eq_int);
    return Typed{Kind::boolean};
  }

  // Whether `e` is `column`'s text as stored: the column, or a varchar's
  // cast to text (a char(n)'s drops its padding).
  static bool same_bytes(const Expr& e, const ColumnExpr& column) {
    if (&e == &column) return true;
    const auto* cast = dynamic_cast<const FunctionExpr*>(&e);
    return cast != nullptr && cast->name == "cast" && cast->args.size() == 1 && cast->args[0].get() == &column &&
           (column.type.id == TypeId::text || column.type.id == TypeId::varchar);
  }

  static const ColumnExpr* find_column(const Expr& e) {
    if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) return c;
    const ColumnExpr* found = nullptr;
    for_each_child(const_cast<Expr&>(e), [&](Expr& child) {
      if (found == nullptr) found = find_column(child);
    });
    return found;
  }

  // The key, then its build row, then (a value column) the value by that row.
  std::optional<Typed> lookup(const LookupExpr& l) {
    const TypeId id = l.type.id;
    Typed t;
    if (id == TypeId::boolean) t.kind = Kind::boolean;
    else if (int_bits(id) || id == TypeId::date || id == TypeId::timestamp || id == TypeId::timestamptz || id == TypeId::time) t.kind = Kind::integer;
    else if (id == TypeId::float8) t.kind = Kind::floating;
    else if (id == TypeId::numeric && l.scale) t = Typed{Kind::numeric, *l.scale};
    else return std::nullopt;
    if (columns_.lookups_unbuilt) {
      const auto key = compile(*l.key);
      if (!key || key->kind != Kind::integer) return std::nullopt;
      emit(ProgramOp::lookup, 0);
      if (l.column >= 0) emit(ProgramOp::lookup, 0);
      return t;
    }
    LookupTable& table = l.set->table(l.table);
    const LookupColumn rows = lookup_rows_column(table);
    std::optional<ProgramColumn> values;
    if (l.column >= 0) {
      values = lookup_value_column(table, l.column, t.scale);
      if (!values) return std::nullopt;
    }
    const auto key = compile(*l.key);
    if (!key || key->kind != Kind::integer) return std::nullopt;
    emit(ProgramOp::lookup, columns_.add_lookup(rows));
    if (values) emit(ProgramOp::lookup, columns_.add_lookup(LookupColumn{*values}));
    return t;
  }

  // Brings the value on top of the stack from scale `from` to `to` (>= from).
  void rescale(int32_t from, int32_t to) {
    if (to <= from) return;
    if (!steps.empty() && scaled_in_place(steps.back(), to - from)) return;
    emit(ProgramOp::scale_int, to - from);
  }

  // A constant brought to a larger scale is scaled here where it fits 64
  // bits: `1 - l_discount` is 100 - l_discount (one pass), not 1 scaled per row.
  static bool scaled_in_place(ProgramStep& step, int32_t k) {
    const int64_t factor = k >= 0 && k <= 18 ? static_cast<int64_t>(program_detail::pow10_i128(k)) : 0;
    if (step.op != ProgramOp::const_int || factor == 0 || step.value > INT64_MAX / factor ||
        step.value < -(INT64_MAX / factor)) return false;
    step.value *= factor;
    return true;
  }

  std::optional<Typed> function(const FunctionExpr& f) {
    const std::string& name = f.name;
    const TypeId out = f.type.id;
    if (f.type.id == TypeId::float4) return std::nullopt;  // float4 arithmetic rounds as float4
    if (name == "cast" && f.args.size() == 1) return cast(f);
    if (name == "extract" && f.args.size() == 2) return extract_field(f);
    if (name == "date_trunc" && f.args.size() == 2) return date_trunc(f);
    if (name == "-" && f.args.size() == 1) {
      const auto t = compile(*f.args[0]);
      if (!t || t->kind == Kind::boolean) return std::nullopt;
      if (t->kind == Kind::floating) {
        emit(ProgramOp::neg_float);
      } else {
        emit(ProgramOp::neg_int);
        if (int_bits(out)) emit(ProgramOp::check_range, int_bits(out));
      }
      return t;
    }
    if (f.args.size() != 2) return std::nullopt;
    if (name == "=" || name == "<>" || name == "!=" || name == "<" || name == "<=" || name == ">" || name == ">=") {
      if (!comparison(name, *f.args[0], *f.args[1])) return std::nullopt;
      return Typed{Kind::boolean};
    }
    if (name != "+" && name != "-" && name != "*") return std::nullopt;
    if (out == TypeId::float8) {
      const auto a = compile(*f.args[0]);
      if (!a || a->kind != Kind::floating) return std::nullopt;
      const auto b = compile(*f.args[1]);
      if (!b || b->kind != Kind::floating) return std::nullopt;
      emit(name == "+" ? ProgramOp::add_float : name == "-" ? ProgramOp::sub_float : ProgramOp::mul_float);
      return Typed{Kind::floating};
    }
    if (!int_bits(out) && out != TypeId::numeric) return std::nullopt;  // date arithmetic and others stay on the host
    // Numeric: + and - at the larger scale, * at the sum (PostgreSQL's dscale).
    const size_t first = steps.size();
    const auto a = compile(*f.args[0]);
    if (!a || !int_kind(a->kind) || a->kind == Kind::boolean) return std::nullopt;
    const size_t second = steps.size();
    const auto b = compile(*f.args[1]);
    if (!b || !int_kind(b->kind) || b->kind == Kind::boolean) return std::nullopt;
    Typed r{out == TypeId::numeric ? Kind::numeric : Kind::integer, 0};
    if (name == "*") {
      r.scale = a->scale + b->scale;
      emit(ProgramOp::mul_int);
    } else {
      r.scale = std::max(a->scale, b->scale);
      rescale(b->scale, r.scale);
      if (a->scale < r.scale) insert_scale(first, second, r.scale - a->scale);
      emit(name == "+" ? ProgramOp::add_int : ProgramOp::sub_int);
    }
    if (int_bits(out)) emit(ProgramOp::check_range, int_bits(out));
    return r;
  }

  // extract(field from a date or timestamp) of a whole-number field: a
  // numeric of scale 0. (A timestamptz's fields are its local time's, in
  // the session's zone: host.)
  std::optional<Typed> extract_field(const FunctionExpr& f) {
    const auto unit = extract_whole_field(f, parameters_);
    if (!unit) return std::nullopt;
    const Expr* value = f.args[1].get();
    int32_t micros = 1;  // the value's unit: 1 microseconds, 0 days
    if (const auto* c = dynamic_cast<const FunctionExpr*>(value);
        c != nullptr && c->name == "cast" && c->args.size() == 1 && c->args[0]->type.id == TypeId::date) {
      // The binder's date -> timestamp: the date's days. A date has no hour
      // or minute (PostgreSQL raises an error: the host path's).
      if (*unit == "hour" || *unit == "minute") return std::nullopt;
      value = c->args[0].get();
      micros = 0;
    } else if (value->type.id != TypeId::timestamp) {
      return std::nullopt;
    }
    const auto t = compile(*value);
    if (!t || t->kind != Kind::integer) return std::nullopt;
    const ProgramStep step = *extract_step(*unit, micros);
    emit(step.op, step.arg);
    return Typed{Kind::numeric, 0};
  }

  // date_trunc(unit, timestamp) for a unit of fixed length (second to day):
  // a timestamp. (Months and years have no fixed length; a timestamptz is
  // cut in the session's zone: host.)
  std::optional<Typed> date_trunc(const FunctionExpr& f) {
    if (f.type.id != TypeId::timestamp || f.args[1]->type.id != TypeId::timestamp) return std::nullopt;
    const auto unit = constant_word(*f.args[0], parameters_);
    const auto micros = unit ? trunc_micros(*unit) : std::nullopt;
    if (!micros) return std::nullopt;
    const auto t = compile(*f.args[1]);
    if (!t || t->kind != Kind::integer) return std::nullopt;
    emit(ProgramOp::floor_to, 0, *micros);
    return Typed{Kind::integer, 0};
  }

  // Inserts a scale step after the first operand's steps [first, second).
  void insert_scale(size_t first, size_t second, int32_t k) {
    if (second == first + 1 && scaled_in_place(steps[first], k)) return;
    steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(second), ProgramStep{ProgramOp::scale_int, k, 0, 0});
  }

  std::optional<Typed> cast(const FunctionExpr& f) {
    const TypeId to = f.type.id;
    const TypeId from = f.args[0]->type.id;
    const auto t = compile(*f.args[0]);
    if (!t) return std::nullopt;
    if (int_bits(to) && int_bits(from)) {
      if (int_bits(to) < int_bits(from)) emit(ProgramOp::check_range, int_bits(to));
      return Typed{};
    }
    if (to == TypeId::numeric && f.type.typmod < 4) {
      // An integer becomes a numeric of scale 0; a numeric keeps its scale.
      if (int_bits(from)) return Typed{Kind::numeric, 0};
      if (from == TypeId::numeric && t->kind == Kind::numeric) return t;
      return std::nullopt;
    }
    if (to == TypeId::float8) {
      if (from == TypeId::float4 || from == TypeId::float8) return Typed{Kind::floating};
      // int4 and int2 convert exactly; int8 as C's conversion rounds, as PostgreSQL's i8tod does.
      if (int_bits(from)) {
        emit(ProgramOp::int_to_float);
        return Typed{Kind::floating};
      }
    }
    return std::nullopt;
  }

  // x IN (constants) as one in_list step, where x is an integer, date,
  // timestamp or numeric and every constant one too, not NULL: each is
  // brought to the larger of the scales, as `x = constant` compares them.
  // False, with nothing emitted, for any other list.
  bool integer_in_list(const InListExpr& in) {
    std::vector<Numeric> items;
    for (const auto& item : in.list) {
      const TypeId id = item->type.id;
      const bool integer_like = int_bits(id) || id == TypeId::date || id == TypeId::timestamp ||
                                id == TypeId::timestamptz || id == TypeId::time;
      if (!integer_like && id != TypeId::numeric) return false;
      const auto n = exact_constant(*item, parameters_);
      // NULL, NaN or beyond 18 digits: the OR of comparisons.
      if (!n || n->scale > 18 || n->mantissa > INT64_MAX || n->mantissa < INT64_MIN) return false;
      items.push_back(*n);
    }
    const size_t mark = steps.size();
    const int saved_depth = depth, saved_max = max_depth;
    const ProgramColumnMap saved_columns = columns_;
    auto rollback = [&] {
      steps.resize(mark);
      depth = saved_depth;
      max_depth = saved_max;
      columns_ = saved_columns;
      return false;
    };
    const auto a = compile(*in.arg);
    if (!a || a->kind == Kind::floating || a->kind == Kind::boolean) return rollback();
    int32_t scale = a->scale;
    for (const Numeric& item : items) scale = std::max(scale, item.scale);
    std::vector<int64_t> values;
    for (const Numeric& item : items) {
      const __int128 scaled = item.mantissa * program_detail::pow10_i128(scale - item.scale);
      if (scaled > INT64_MAX || scaled < INT64_MIN) return rollback();
      values.push_back(static_cast<int64_t>(scaled));
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    rescale(a->scale, scale);
    emit(ProgramOp::in_list, static_cast<int32_t>(values.size()));
    for (const int64_t v : values) steps.push_back(ProgramStep{ProgramOp::const_int, 0, v, 0});  // data: no depth
    if (in.negated) emit(ProgramOp::not_);
    return true;
  }

  bool comparison(const std::string& op, const Expr& left, const Expr& right) {
    const size_t first = steps.size();
    const auto a = compile(left);
    if (!a) return false;
    const size_t second = steps.size();
    const auto b = compile(right);
    if (!b) return false;
    const bool floating = a->kind == Kind::floating;
    if (floating != (b->kind == Kind::floating)) return false;
    if (!floating) {
      const int32_t scale = std::max(a->scale, b->scale);
      rescale(b->scale, scale);
      if (a->scale < scale) insert_scale(first, second, scale - a->scale);
    }
    ProgramOp base = floating ? ProgramOp::eq_float : ProgramOp::eq_int;
    int offset = 0;
    if (op == "=") offset = 0;
    else if (op == "<>" || op == "!=") offset = 1;
    else if (op == "<") offset = 2;
    else if (op == "<=") offset = 3;
    else if (op == ">") offset = 4;
    else offset = 5;
    emit(static_cast<ProgramOp>(static_cast<int>(base) + offset));
    return true;
  }

  ProgramColumnMap& columns_;
  const std::vector<Value>* parameters_;
};

std::optional<ColumnProgram> finish(Compiler& c, ProgramResult result, int32_t scale) {
  if (c.max_depth > kProgramStackDepth || c.steps.size() > 256) return std::nullopt;
  ColumnProgram p;
  p.steps = std::move(c.steps);
  p.result = result;
  p.scale = scale;
  return p;
}

}  // namespace

std::optional<ColumnProgram> compile_filter(const Expr& e, ProgramColumnMap& columns,
                                            const std::vector<Value>* parameters) {
  ProgramColumnMap trial = columns;
  Compiler c(trial, parameters);
  const auto t = c.compile(e);
  if (!t || t->kind != Kind::boolean) return std::nullopt;
  auto p = finish(c, ProgramResult::boolean, 0);
  if (p) columns = std::move(trial);
  return p;
}

ColumnProgram compile_text_rank(int table_column, ProgramColumnMap& columns, const std::vector<int32_t>& rank_of_code) {
  ColumnProgram p;
  p.steps.push_back(ProgramStep{ProgramOp::load, columns.add(table_column)});
  ProgramColumn ranks{rank_of_code.data(), nullptr, static_cast<uint8_t>(ColumnWidth::int32), 0, rank_of_code.size()};
  p.steps.push_back(ProgramStep{ProgramOp::lookup, columns.add_lookup(LookupColumn{ranks})});
  p.result = ProgramResult::int64;
  return p;
}

std::optional<ColumnProgram> compile_key(const Expr& e, ProgramColumnMap& columns, const std::vector<Value>* parameters,
                                         std::shared_ptr<const storage::StringDictionary>& dictionary) {
  dictionary = nullptr;
  if (physical_of(e.type.id) != Physical::text) {
    if (e.type.id == TypeId::numeric && !engine_aggregation::static_numeric_scale(e)) return std::nullopt;
    return compile_input(e, columns, parameters);
  }
  ProgramColumnMap trial = columns;
  Compiler c(trial, parameters);
  if (!c.text_key(e, dictionary)) return std::nullopt;
  auto p = finish(c, ProgramResult::int64, 0);
  if (p) columns = std::move(trial);
  return p;
}

std::optional<ColumnProgram> compile_input(const Expr& e, ProgramColumnMap& columns,
                                           const std::vector<Value>* parameters) {
  ProgramColumnMap trial = columns;
  Compiler c(trial, parameters);
  const auto t = c.compile(e);
  if (!t) return std::nullopt;
  // The program's type must be the expression's: int64 for integers and
  // booleans, scaled int64 for numeric, float64 for float8 only.
  const TypeId id = e.type.id;
  std::optional<ColumnProgram> p;
  if (t->kind == Kind::floating) {
    if (id != TypeId::float8) return std::nullopt;
    p = finish(c, ProgramResult::float64, 0);
  } else if (t->kind == Kind::numeric) {
    if (id != TypeId::numeric) return std::nullopt;
    p = finish(c, ProgramResult::int64, t->scale);
  } else if (t->kind == Kind::boolean) {
    if (id != TypeId::boolean) return std::nullopt;
    p = finish(c, ProgramResult::int64, 0);
  } else {
    if (!int_bits(id) && id != TypeId::date && id != TypeId::timestamp && id != TypeId::timestamptz && id != TypeId::time) return std::nullopt;
    p = finish(c, ProgramResult::int64, 0);
  }
  if (p) columns = std::move(trial);
  return p;
}

}  // namespace tally::executor
