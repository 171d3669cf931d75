#include "executor/dml/copy_from.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <span>

#include "executor/dml/row_check.hpp"
#include "executor/types/type_io.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {
namespace {

// Parse once this much unparsed input is buffered (or at the end of input):
// large blocks keep the per-CopyData-message overhead out of the row loop.
constexpr size_t parse_block_bytes = 1 << 20;
// PostgreSQL's MAX_COPY_DATA_DISPLAY: longer lines/values are cut in CONTEXT.
constexpr size_t max_display_bytes = 100;
// Rows between cancellation checks.
constexpr uint64_t cancel_check_rows = 1 << 16;

struct Field {
  std::string_view value;  // decoded value
  std::string_view raw;    // as in the input (text format NULL compares this)
  bool quoted = false;
};

enum class ParseResult { record, need_more, end_marker };

// A line-ending inconsistency (PostgreSQL fixes the EOL style from the first
// line); its CONTEXT names only the line number.
struct EolError {
  std::string message, hint;
};

enum class Eol { unknown, nl, crnl, cr };

std::string display(std::string_view s) {
  if (s.size() <= max_display_bytes) return std::string(s);
  size_t cut = max_display_bytes;
  while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

// PostgreSQL verifies the input's encoding before it parses a line, so a
// line with invalid UTF-8 fails with 22021 and a CONTEXT that names only the
// line: its bytes are never echoed. Called on the error paths (the common
// path validates text values as it stores them).
void reject_invalid_utf8(std::string_view line, const std::string& line_only_context) {
  try {
    types::check_utf8(line);
  } catch (Error& e) {
    e.with_context(line_only_context);
    throw;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class RecordParser {
 public:
  RecordParser(const CopyOptions& o, size_t expected_fields) : o_(o) {
    for (const char c : {o.delimiter, '\n', '\r', o.quote}) csv_special_[static_cast<uint8_t>(c)] = true;
    fields_.resize(expected_fields + 1);
    decoded_.resize(expected_fields + 1);
  }
  std::span<const Field> fields() const { return {fields_.data(), nfields_}; }
  std::string_view line() const { return line_; }

  // Parses one record starting at buf[pos]. On `record`, pos moves past it.
  ParseResult parse(const std::string& buf, size_t& pos, bool at_eof) {
    return o_.csv ? parse_csv(buf, pos, at_eof) : parse_text(buf, pos, at_eof);
  }

 private:
  std::string& scratch(size_t field) {
    if (field >= decoded_.size()) decoded_.resize(field + 1);
    std::string& s = decoded_[field];
    s.clear();
    return s;
  }

  ParseResult parse_text(const std::string& buf, size_t& pos, bool at_eof) {
    const char* begin = buf.data() + pos;
    const char* end = buf.data() + buf.size();
    const char* nl = static_cast<const char*>(std::memchr(begin, '\n', static_cast<size_t>(end - begin)));
    if (eol_ == Eol::unknown) {
      // The first line fixes the style: \n, \r\n or a lone \r.
      const char* cr = static_cast<const char*>(std::memchr(begin, '\r', static_cast<size_t>((nl ? nl : end) - begin)));
      if (cr && cr + 1 == end && !at_eof) return ParseResult::need_more;
      if (cr && (cr + 1 == end || cr[1] != '\n')) eol_ = Eol::cr;
      else if (nl) eol_ = cr ? Eol::crnl : Eol::nl;
    }
    const char* line_end;
    if (eol_ == Eol::cr) {
      const char* cr = static_cast<const char*>(std::memchr(begin, '\r', static_cast<size_t>(end - begin)));
      if (!cr && !at_eof) return ParseResult::need_more;
      line_end = cr ? cr : end;
      if (std::memchr(begin, '\n', static_cast<size_t>(line_end - begin)))
        throw EolError{"literal newline found in data", "Use \"\\n\" to represent newline."};
      pos = static_cast<size_t>((cr ? cr + 1 : end) - buf.data());
    } else {
      if (!nl && !at_eof) return ParseResult::need_more;
      line_end = nl ? nl : end;
      const bool crnl = nl && line_end > begin && line_end[-1] == '\r';
      if (nl && eol_ == Eol::crnl && !crnl)
        throw EolError{"literal newline found in data", "Use \"\\n\" to represent newline."};
      if (crnl && eol_ == Eol::crnl) --line_end;
      if (std::memchr(begin, '\r', static_cast<size_t>(line_end - begin)))
        throw EolError{"literal carriage return found in data", "Use \"\\r\" to represent carriage return."};
      pos = static_cast<size_t>((nl ? nl + 1 : end) - buf.data());
    }
    line_ = std::string_view(begin, static_cast<size_t>(line_end - begin));
    if (line_ == "\\.") return ParseResult::end_marker;
    nfields_ = 0;
    const char delim = o_.delimiter;
    const char* p = begin;
    for (;;) {
      const char* start = p;
      bool escaped = false;
      while (p < line_end && *p != delim) {
        if (*p == '\\') {
          escaped = true;
          if (p + 1 < line_end) ++p;
        }
        ++p;
      }
      Field f;
      f.raw = std::string_view(start, static_cast<size_t>(p - start));
      f.value = escaped ? unescape_text(f.raw, nfields_) : f.raw;
      add_field(f);
      if (p >= line_end) break;
      ++p;  // delimiter
    }
    return ParseResult::record;
  }

  // Backslash sequences of the text format (CopyReadAttributesText).
  std::string_view unescape_text(std::string_view raw, size_t field) {
    std::string& out = scratch(field);
    for (size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c != '\\' || i + 1 >= raw.size()) {
        out += c;
        continue;
      }
      c = raw[++i];
      switch (c) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x': {
          if (i + 1 < raw.size() && hex_value(raw[i + 1]) >= 0) {
            int v = hex_value(raw[++i]);
            if (i + 1 < raw.size() && hex_value(raw[i + 1]) >= 0) v = v * 16 + hex_value(raw[++i]);
            out += static_cast<char>(v);
          } else {
            out += 'x';
          }
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            int v = c - '0';
            for (int k = 0; k < 2 && i + 1 < raw.size() && raw[i + 1] >= '0' && raw[i + 1] <= '7'; ++k)
              v = v * 8 + (raw[++i] - '0');
            out += static_cast<char>(v & 0xff);
          } else {
            out += c;
          }
      }
    }
    return out;
  }

  // CSV (CopyReadLineCSV + CopyReadAttributesCSV): quotes may span lines.
  ParseResult parse_csv(const std::string& buf, size_t& pos, bool at_eof) {
    const char* begin = buf.data() + pos;
    const char* end = buf.data() + buf.size();
    const char delim = o_.delimiter, quote = o_.quote, escape = o_.escape;
    nfields_ = 0;
    const char* p = begin;
    for (;;) {
      const char* start = p;
      bool any_quote = false;
      // Fast scan of an unquoted field: one table load per byte.
      while (p < end && !csv_special_[static_cast<uint8_t>(*p)]) ++p;
      Field f;
      if (p < end && *p == quote) {
        // The field has quoted sections: decode into scratch.
        any_quote = true;
        std::string& out = scratch(nfields_);
        out.append(start, static_cast<size_t>(p - start));
        bool in_quote = false;
        for (;;) {
          if (p >= end) {
            if (!at_eof) return ParseResult::need_more;
            if (in_quote) {
              line_ = std::string_view(begin, static_cast<size_t>(end - begin));
              throw Error(SqlState::bad_copy_file_format, "unterminated CSV quoted field");
            }
            break;
          }
          const char c = *p;
          if (in_quote) {
            if (c == escape && escape != quote && p + 1 < end && (p[1] == quote || p[1] == escape)) {
              out += p[1];
              p += 2;
            } else if (c == escape && escape != quote && p + 1 >= end && !at_eof) {
              return ParseResult::need_more;
            } else if (c == quote) {
              if (escape == quote && p + 1 < end && p[1] == quote) {
                out += quote;
                p += 2;
              } else if (escape == quote && p + 1 >= end && !at_eof) {
                return ParseResult::need_more;
              } else {
                in_quote = false;
                ++p;
              }
            } else {
              out += c;
              ++p;
            }
          } else {
            if (c == delim || c == '\n' || c == '\r') break;
            if (c == quote) in_quote = true;
            else out += c;
            ++p;
          }
        }
        f.value = out;
      } else {
        f.value = std::string_view(start, static_cast<size_t>(p - start));
      }
      f.raw = std::string_view(start, static_cast<size_t>(p - start));
      f.quoted = any_quote;
      add_field(f);
      if (p >= end) {
        if (!at_eof) return ParseResult::need_more;
        line_ = std::string_view(begin, static_cast<size_t>(p - begin));
        pos = buf.size();
        break;
      }
      if (*p == delim) {
        ++p;
        continue;
      }
      // End of record: \n or \r\n, consistently with the first line.
      line_ = std::string_view(begin, static_cast<size_t>(p - begin));
      if (*p == '\r') {
        if (p + 1 >= end && !at_eof) return ParseResult::need_more;
        const bool crnl = p + 1 < end && p[1] == '\n';
        if (eol_ == Eol::unknown) eol_ = crnl ? Eol::crnl : Eol::cr;
        if ((eol_ == Eol::crnl) != crnl || eol_ == Eol::nl)
          throw EolError{"unquoted carriage return found in data", "Use quoted CSV field to represent carriage return."};
        if (crnl) ++p;
      } else {
        if (eol_ == Eol::unknown) eol_ = Eol::nl;
        if (eol_ != Eol::nl)
          throw EolError{"unquoted newline found in data", "Use quoted CSV field to represent newline."};
      }
      ++p;
      pos = static_cast<size_t>(p - buf.data());
      break;
    }
    if (nfields_ == 1 && !fields_[0].quoted && fields_[0].raw == "\\.") return ParseResult::end_marker;
    return ParseResult::record;
  }

  // Appends a field without per-call capacity checks in the common case.
  void add_field(const Field& f) {
    if (nfields_ == fields_.size()) fields_.resize(fields_.size() * 2 + 1);
    fields_[nfields_++] = f;
  }

  const CopyOptions& o_;
  Eol eol_ = Eol::unknown;
  bool csv_special_[256] = {};  // bytes that end an unquoted CSV field
  std::vector<Field> fields_;
  size_t nfields_ = 0;
  std::vector<std::string> decoded_;  // per-field scratch, reused across records
  std::string_view line_;
};

}  // namespace

FileCopySource::FileCopySource(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    const int err = errno;
    throw Error(err == ENOENT ? SqlState::undefined_file : SqlState::io_error,
                "could not open file \"" + path + "\" for reading: " + std::strerror(err));
  }
}

FileCopySource::~FileCopySource() {
  if (file_) std::fclose(file_);
}

bool FileCopySource::next(std::string& buf) {
  char block[1 << 16];
  const size_t n = std::fread(block, 1, sizeof block, file_);
  if (n == 0) {
    if (std::ferror(file_))
      throw Error(SqlState::io_error, "could not read from COPY file \"" + path_ + "\": " + std::strerror(errno));
    return false;
  }
  buf.append(block, n);
  return true;
}

uint64_t copy_from(StatementContext& ctx, const catalog::TableDef& def, const std::vector<int>& targets,
                   const CopyOptions& o, CopySource& source, bool& end_marker_seen) {
  end_marker_seen = false;
  const size_t ncols = def.columns.size();
  std::vector<int> untargeted;
  {
    std::vector<bool> is_target(ncols, false);
    for (int t : targets) is_target[static_cast<size_t>(t)] = true;
    for (size_t c = 0; c < ncols; ++c)
      if (!is_target[c]) untargeted.push_back(static_cast<int>(c));
  }
  // Per target column: the conversion, decided once instead of per value.
  enum class Kind { text, int4, int8, float8, date, other };
  std::vector<Kind> kinds;
  for (const int t : targets) {
    switch (def.columns[static_cast<size_t>(t)].type.id) {
      case TypeId::text: case TypeId::varchar: case TypeId::bpchar: kinds.push_back(Kind::text); break;
      case TypeId::int4: kinds.push_back(Kind::int4); break;
      case TypeId::int8: kinds.push_back(Kind::int8); break;
      case TypeId::float8: kinds.push_back(Kind::float8); break;
      case TypeId::date: kinds.push_back(Kind::date); break;
      default: kinds.push_back(Kind::other); break;
    }
  }
  auto appender = ctx.begin_append(def.oid);
  RecordParser parser(o, targets.size());
  std::vector<std::string> char_scratch(ncols);
  std::vector<char> row_null(ncols, 0);
  std::vector<std::string_view> row_text(ncols);
  const std::string context_prefix = "COPY " + def.name + ", line ";

  std::string buf;
  size_t pos = 0;
  bool at_eof = false;
  uint64_t line_no = 0, rows = 0;
  auto fill = [&](size_t want) {
    if (pos > 0 && pos >= buf.size() / 2) {
      buf.erase(0, pos);
      pos = 0;
    }
    while (!at_eof && buf.size() - pos < want) {
      if (!source.next(buf)) at_eof = true;
    }
  };
  fill(parse_block_bytes);
  for (;;) {
    if (pos >= buf.size()) {
      if (at_eof) break;
      fill(parse_block_bytes);
      continue;
    }
    const size_t record_start = pos;
    ParseResult r;
    try {
      r = parser.parse(buf, pos, at_eof);
    } catch (Error& e) {
      reject_invalid_utf8(parser.line(), context_prefix + std::to_string(line_no + 1));
      e.with_context(context_prefix + std::to_string(line_no + 1) + ": \"" + display(parser.line()) + "\"");
      throw;
    } catch (const EolError& e) {
      throw std::move(Error(SqlState::bad_copy_file_format, e.message)
                          .with_hint(e.hint)
                          .with_context(context_prefix + std::to_string(line_no + 1)));
    }
    if (r == ParseResult::need_more) {
      pos = record_start;
      // At least one more block; more if the record is huge.
      const size_t have = buf.size() - pos;
      fill(have + parse_block_bytes);
      continue;
    }
    ++line_no;
    if (r == ParseResult::end_marker) {
      end_marker_seen = true;
      break;
    }
    const auto& fields = parser.fields();
    auto line_context = [&] {
      reject_invalid_utf8(parser.line(), context_prefix + std::to_string(line_no));
      return context_prefix + std::to_string(line_no) + ": \"" + display(parser.line()) + "\"";
    };
    if (line_no == 1 && o.header) {
      if (o.header_match) {
        if (fields.size() != targets.size())
          throw std::move(Error(SqlState::bad_copy_file_format,
                                "wrong number of fields in header line: got " + std::to_string(fields.size()) +
                                    ", expected " + std::to_string(targets.size()))
                              .with_context(line_context()));
        for (size_t i = 0; i < fields.size(); ++i) {
          const std::string& want = def.columns[static_cast<size_t>(targets[i])].name;
          if (fields[i].value != want)
            throw std::move(Error(SqlState::bad_copy_file_format,
                                  "column name mismatch in header line field " + std::to_string(i + 1) + ": got \"" +
                                      std::string(fields[i].value) + "\", expected \"" + want + "\"")
                                .with_context(line_context()));
        }
      }
      continue;
    }
    if (fields.size() > targets.size() && !(targets.empty() && fields.size() == 1 && fields[0].raw.empty()))
      throw std::move(Error(SqlState::bad_copy_file_format, "extra data after last expected column")
                          .with_context(line_context()));
    if (fields.size() < targets.size())
      throw std::move(Error(SqlState::bad_copy_file_format,
                            "missing data for column \"" + def.columns[static_cast<size_t>(targets[fields.size()])].name + "\"")
                          .with_context(line_context()));
    int first_violation = -1;
    for (size_t i = 0; i < targets.size(); ++i) {
      const int c = targets[i];
      const auto& col = def.columns[static_cast<size_t>(c)];
      const Field& f = fields[i];
      bool is_null;
      if (o.csv) {
        is_null = o.force_not_null[i] ? false
                  : o.force_null[i]   ? f.value == o.null_string
                                      : !f.quoted && f.raw == o.null_string;
      } else {
        is_null = f.raw == o.null_string;
      }
      row_null[static_cast<size_t>(c)] = is_null;
      if (is_null) {
        appender->set_null(c);
        if (col.not_null && first_violation < 0) first_violation = c;
        continue;
      }
      try {
        void* slot = kinds[i] == Kind::text ? nullptr : appender->value_slot(c);
        switch (kinds[i]) {
          case Kind::text: {
            types::check_utf8(f.value);
            const std::string_view v = types::coerce_char(col.type, f.value, char_scratch[static_cast<size_t>(c)]);
            row_text[static_cast<size_t>(c)] = v;
            appender->set_text(c, v);
            break;
          }
          case Kind::int4: {
            const int32_t v = types::parse_int4(f.value);
            std::memcpy(slot, &v, sizeof v);
            break;
          }
          case Kind::int8: {
            const int64_t v = types::parse_int8(f.value);
            std::memcpy(slot, &v, sizeof v);
            break;
          }
          case Kind::float8: {
            const double v = types::parse_float8(f.value);
            std::memcpy(slot, &v, sizeof v);
            break;
          }
          case Kind::date: {
            const int32_t v = types::parse_date(f.value);
            std::memcpy(slot, &v, sizeof v);
            break;
          }
          case Kind::other:
            types::parse_text_value(col.type, f.value, slot);
            break;
        }
      } catch (Error& e) {
        reject_invalid_utf8(parser.line(), context_prefix + std::to_string(line_no));
        e.with_context(context_prefix + std::to_string(line_no) + ", column " + col.name + ": \"" +
                       display(f.value) + "\"");
        throw;
      }
    }
    for (const int c : untargeted) {
      appender->set_null(c);
      row_null[static_cast<size_t>(c)] = 1;
      if (def.columns[static_cast<size_t>(c)].not_null && first_violation < 0) first_violation = c;
    }
    if (first_violation >= 0) {
      std::vector<std::optional<std::string>> row(ncols);
      for (size_t c = 0; c < ncols; ++c) {
        if (row_null[c]) continue;
        if (is_text_kind(def.columns[c].type.id)) {
          row[c] = std::string(row_text[c]);
        } else {
          std::string s;
          types::append_text_value(s, def.columns[c].type, appender->value_slot(static_cast<int>(c)));
          row[c] = s;
        }
      }
      throw std::move(not_null_violation(def, static_cast<size_t>(first_violation), row).with_context(line_context()));
    }
    appender->finish_row();
    ++rows;
    if ((rows & (cancel_check_rows - 1)) == 0) ctx.check_cancel();
  }
  ctx.check_cancel();
  appender->commit();
  return rows;
}

}  // namespace tally::executor::dml
