#include "executor/dml/copy_segment.hpp"

#include <algorithm>
#include <optional>

#include "storage/column_layout.hpp"

#include "executor/dml/row_check.hpp"
#include "executor/types/type_io.hpp"

namespace tally::executor::dml {

CopyPlan::CopyPlan(const catalog::TableDef& table, const std::vector<int>& target_columns, const CopyOptions& o)
    : def(&table), targets(&target_columns), options(&o) {
  const size_t ncols = table.columns.size();
  std::vector<bool> is_target(ncols, false);
  for (const int t : target_columns) is_target[static_cast<size_t>(t)] = true;
  for (size_t c = 0; c < ncols; ++c) {
    if (!is_target[c]) untargeted.push_back(static_cast<int>(c));
    widths.push_back(static_cast<size_t>(storage_width(table.columns[c].type)));
  }
  dicts.assign(ncols, nullptr);
  // Per target column: the conversion, decided once instead of per value.
  for (const int t : target_columns) {
    switch (table.columns[static_cast<size_t>(t)].type.id) {
      case TypeId::text: case TypeId::varchar: case TypeId::bpchar: kinds.push_back(Kind::text); break;
      case TypeId::bytea: kinds.push_back(Kind::bytea); break;
      case TypeId::int4: kinds.push_back(Kind::int4); break;
      case TypeId::int8: kinds.push_back(Kind::int8); break;
      case TypeId::float8: kinds.push_back(Kind::float8); break;
      case TypeId::date: kinds.push_back(Kind::date); break;
      default: kinds.push_back(Kind::other); break;
    }
  }
}

namespace {

// Rows a segment's buffers start with (they double); a 1 MB segment of short
// rows holds ~40k.
constexpr size_t row_growth = 4096;
// Rows whose text values are looked up in the dictionaries together: enough
// probes for their cache misses to overlap, few enough that the values are
// still in cache when they are compared.
constexpr size_t lookup_batch_rows = 1024;

class SegmentParser {
 public:
  SegmentParser(const CopyPlan& plan, CopySegment& seg)
      : plan_(plan), def_(*plan.def), targets_(*plan.targets), o_(*plan.options), seg_(seg),
        parser_(o_, targets_.size()) {
    // The first segment finds the style on its first line itself, as
    // PostgreSQL does: until then a quoted \n is not counted as a line.
    if (!seg.first) parser_.set_eol(plan.eol);
    const size_t ncols = def_.columns.size();
    seg_.data.assign(ncols, {});
    seg_.valid.assign(ncols, {});
    row_null_.assign(ncols, 0);
    row_text_.resize(ncols);
    char_scratch_.resize(ncols);
    lookups_.resize(ncols);
    for (size_t i = 0; i < targets_.size(); ++i) {
      if (plan.kinds[i] != CopyPlan::Kind::text && plan.kinds[i] != CopyPlan::Kind::bytea) continue;  // both dictionary-coded
      Lookups& l = lookups_[static_cast<size_t>(targets_[i])];
      // A batch holds at most lookup_batch_rows rows, one value of the column each.
      l.probes.resize(lookup_batch_rows);
      l.rows.resize(lookup_batch_rows);
    }
  }

  void run() {
    size_t pos = 0;
    while (pos < seg_.input.size()) {
      ParseResult r;
      try {
        r = parser_.parse(seg_.input, pos, /*at_eof=*/true);
      } catch (Error&) {
        fail(seg_.lines + 1 + parser_.quoted_line_ends(), std::current_exception(), line_context());
        return;
      } catch (const EolError& e) {
        fail(seg_.lines + 1 + parser_.quoted_line_ends(),
             std::make_exception_ptr(Error(SqlState::bad_copy_file_format, e.message).with_hint(e.hint)), "",
             /*check_line=*/false);
        return;
      }
      seg_.lines += 1 + parser_.quoted_line_ends();
      ++records_;
      if (r == ParseResult::end_marker) {
        seg_.end_marker = true;
        break;
      }
      if (!record()) return;
      if (seg_.rows - batch_first_row_ >= lookup_batch_rows) look_up_text();
    }
    look_up_text();
  }

 private:
  // Codes the text values of rows [batch_first_row_, rows) from the
  // column dictionaries, all of a column at once (StringDictionary::
  // find_newest of a batch); values not there yet become misses.
  void look_up_text() {
    for (size_t c = 0; c < lookups_.size(); ++c) {
      Lookups& l = lookups_[c];
      if (l.n == 0) continue;
      for (const auto& [k, offset, size] : l.kept) l.probes[k].value = std::string_view(l.bytes).substr(offset, size);
      plan_.dicts[c]->find_newest(std::span(l.probes.data(), l.n));
      uint8_t* codes = seg_.data[c].data();
      for (size_t k = 0; k < l.n; ++k) {
        const auto& p = l.probes[k];
        if (p.code < 0) {
          seg_.misses.push_back({l.rows[k], static_cast<int>(c), static_cast<uint32_t>(seg_.miss_bytes.size()),
                                 static_cast<uint32_t>(p.value.size()), p.hash});
          seg_.miss_bytes.append(p.value);
        }
        std::memcpy(codes + size_t{l.rows[k]} * sizeof p.code, &p.code, sizeof p.code);
      }
      l.n = 0;
      l.bytes.clear();
      l.kept.clear();
    }
    batch_first_row_ = seg_.rows;
  }

  std::string line_context() const { return ": \"" + display(parser_.line()) + "\""; }

  // Records the error of line `line`; as PostgreSQL checks a line's encoding
  // before it parses it, invalid UTF-8 in the line wins, with a CONTEXT that
  // names the line only (its bytes are never echoed).
  void fail(uint64_t line, std::exception_ptr error, std::string context, bool check_line = true) {
    if (check_line) {
      try {
        types::check_utf8(parser_.line());
      } catch (Error&) {
        error = std::current_exception();
        context.clear();
      }
    }
    seg_.error = std::move(error);
    seg_.error_line = line;
    seg_.error_context = std::move(context);
  }
  void fail(Error e) { fail(seg_.lines, std::make_exception_ptr(std::move(e)), line_context()); }

  void reserve_row() {
    if (seg_.rows < capacity_) return;
    capacity_ = std::max(row_growth, capacity_ * 2);
    for (size_t c = 0; c < seg_.data.size(); ++c) {
      seg_.data[c].resize(capacity_ * plan_.widths[c]);
      if (!seg_.valid[c].empty()) seg_.valid[c].resize(capacity_, 1);
    }
  }
  void set_null(size_t c) {
    auto& v = seg_.valid[c];
    if (v.empty()) v.assign(capacity_, 1);
    v[seg_.rows] = 0;
  }

  // Converts one parsed record into row seg_.rows; false after an error.
  bool record() {
    const auto fields = parser_.fields();
    if (seg_.first && records_ == 1 && o_.header) return header(fields);
    if (fields.size() > targets_.size() && !(targets_.empty() && fields.size() == 1 && fields[0].raw.empty())) {
      fail(Error(SqlState::bad_copy_file_format, "extra data after last expected column"));
      return false;
    }
    if (fields.size() < targets_.size()) {
      fail(Error(SqlState::bad_copy_file_format,
                 "missing data for column \"" + def_.columns[static_cast<size_t>(targets_[fields.size()])].name + "\""));
      return false;
    }
    if (seg_.data.empty()) {  // a table without columns
      ++seg_.rows;
      return true;
    }
    reserve_row();
    const size_t row = seg_.rows;
    int first_violation = -1;
    for (size_t i = 0; i < targets_.size(); ++i) {
      const auto c = static_cast<size_t>(targets_[i]);
      const auto& col = def_.columns[c];
      const Field& f = fields[i];
      bool is_null;
      if (o_.csv) {
        is_null = o_.force_not_null[i] ? false
                  : o_.force_null[i]   ? f.value == o_.null_string
                                       : !f.quoted && f.raw == o_.null_string;
      } else {
        is_null = f.raw == o_.null_string;
      }
      row_null_[c] = is_null;
      void* slot = seg_.data[c].data() + row * plan_.widths[c];
      if (is_null) {
        set_null(c);
        std::memset(slot, 0, plan_.widths[c]);
        if (col.not_null && first_violation < 0) first_violation = static_cast<int>(c);
        continue;
      }
      try {
        convert(i, c, f.value, slot);
      } catch (Error&) {
        fail(seg_.lines, std::current_exception(), ", column " + col.name + ": \"" + display(f.value) + "\"");
        return false;
      }
    }
    for (const int u : plan_.untargeted) {
      const auto c = static_cast<size_t>(u);
      set_null(c);
      std::memset(seg_.data[c].data() + row * plan_.widths[c], 0, plan_.widths[c]);
      row_null_[c] = 1;
      // A column with a DEFAULT is filled when the segment is appended (copy_from.cpp).
      if (def_.columns[c].not_null && def_.columns[c].default_expr.empty() && first_violation < 0) first_violation = u;
    }
    if (first_violation >= 0) {
      fail(not_null_violation(def_, static_cast<size_t>(first_violation), failing_row(row)));
      return false;
    }
    ++seg_.rows;
    return true;
  }

  void convert(size_t i, size_t c, std::string_view value, void* slot) {
    switch (plan_.kinds[i]) {
      case CopyPlan::Kind::text:
      case CopyPlan::Kind::bytea: {
        // Both are dictionary-coded: text as it is (char(n)'s rules applied),
        // bytea as the bytes its input function reads.
        std::string_view v;
        if (plan_.kinds[i] == CopyPlan::Kind::text) {
          types::check_utf8(value);
          v = types::coerce_char(def_.columns[c].type, value, char_scratch_[c]);
        } else {
          char_scratch_[c] = types::parse_bytea(value);
          v = char_scratch_[c];
        }
        row_text_[c] = v;
        // Coded in the next look_up_text(); the slot is written then.
        Lookups& l = lookups_[c];
        const size_t k = l.n++;
        l.rows[k] = static_cast<uint32_t>(seg_.rows);
        const std::string& input = seg_.input;
        if (v.data() >= input.data() && v.data() + v.size() <= input.data() + input.size()) {
          l.probes[k] = {v, storage::StringDictionary::hash(v), -1};
        } else {
          // Decoded into scratch that the next record reuses: kept until the lookup.
          l.kept.push_back({static_cast<uint32_t>(k), static_cast<uint32_t>(l.bytes.size()),
                            static_cast<uint32_t>(v.size())});
          l.probes[k] = {{}, storage::StringDictionary::hash(v), -1};
          l.bytes.append(v);
        }
        break;
      }
      case CopyPlan::Kind::int4: {
        const int32_t v = types::parse_int4(value);
        std::memcpy(slot, &v, sizeof v);
        break;
      }
      case CopyPlan::Kind::int8: {
        const int64_t v = types::parse_int8(value);
        std::memcpy(slot, &v, sizeof v);
        break;
      }
      case CopyPlan::Kind::float8: {
        const double v = types::parse_float8(value);
        std::memcpy(slot, &v, sizeof v);
        break;
      }
      case CopyPlan::Kind::date: {
        const int32_t v = types::parse_date(value);
        std::memcpy(slot, &v, sizeof v);
        break;
      }
      case CopyPlan::Kind::other:
        types::parse_text_value(def_.columns[c].type, value, slot);
        break;
    }
  }

  std::vector<std::optional<std::string>> failing_row(size_t row) const {
    std::vector<std::optional<std::string>> out(def_.columns.size());
    for (size_t c = 0; c < out.size(); ++c) {
      if (row_null_[c]) continue;
      if (is_string_stored(def_.columns[c].type.id)) {
        std::string s;
        types::append_stored_string(s, def_.columns[c].type.id, row_text_[c]);
        out[c] = s;
      } else {
        std::string s;
        types::append_text_value(s, def_.columns[c].type, seg_.data[c].data() + row * plan_.widths[c]);
        out[c] = s;
      }
    }
    return out;
  }

  bool header(std::span<const Field> fields) {
    if (!o_.header_match) return true;
    if (fields.size() != targets_.size()) {
      fail(Error(SqlState::bad_copy_file_format, "wrong number of fields in header line: got " +
                                                     std::to_string(fields.size()) + ", expected " +
                                                     std::to_string(targets_.size())));
      return false;
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string& want = def_.columns[static_cast<size_t>(targets_[i])].name;
      if (fields[i].value != want) {
        fail(Error(SqlState::bad_copy_file_format, "column name mismatch in header line field " +
                                                       std::to_string(i + 1) + ": got \"" +
                                                       std::string(fields[i].value) + "\", expected \"" + want + "\""));
        return false;
      }
    }
    return true;
  }

  const CopyPlan& plan_;
  const catalog::TableDef& def_;
  const std::vector<int>& targets_;
  const CopyOptions& o_;
  CopySegment& seg_;
  RecordParser parser_;
  std::vector<char> row_null_;
  std::vector<std::string_view> row_text_;
  std::vector<std::string> char_scratch_;
  size_t capacity_ = 0;  // rows the column buffers hold
  // Per table column: the text values of rows since batch_first_row_, to be
  // coded together (look_up_text).
  struct Lookups {
    std::vector<storage::StringDictionary::Probe> probes;  // [0, n) in use
    std::vector<uint32_t> rows;
    size_t n = 0;
    std::string bytes;  // values that are not views into the input
    struct Kept {
      uint32_t probe, offset, size;
    };
    std::vector<Kept> kept;
  };
  std::vector<Lookups> lookups_;
  size_t batch_first_row_ = 0;
  uint64_t records_ = 0;  // records parsed, an end marker's included
};

}  // namespace

void parse_segment(const CopyPlan& plan, CopySegment& seg) noexcept {
  try {
    SegmentParser(plan, seg).run();
  } catch (...) {
    // Out of memory and the like: reported at the segment's next line.
    seg.error = std::current_exception();
    seg.error_line = seg.lines + 1;
    seg.error_context.clear();
  }
}

}  // namespace tally::executor::dml
