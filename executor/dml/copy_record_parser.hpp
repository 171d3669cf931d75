#pragma once
// COPY FROM's record parser: one text-format line or CSV record at a time
// (PostgreSQL's CopyReadLine + CopyReadAttributes*), with fields as views
// into the input or into per-field scratch. Shared by every parse worker of a
// COPY (copy_segment.hpp); each worker owns one.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "executor/dml/copy_options.hpp"

namespace tally::executor::dml {

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

// PostgreSQL's MAX_COPY_DATA_DISPLAY: longer lines/values are cut in CONTEXT.
inline std::string display(std::string_view s) {
  constexpr size_t max_display_bytes = 100;
  if (s.size() <= max_display_bytes) return std::string(s);
  size_t cut = max_display_bytes;
  while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

inline int hex_value(char c) {
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
  Eol eol() const { return eol_; }
  // Line ends inside quotes of the last CSV record parsed (so far, after an
  // error): PostgreSQL's line numbers count them (CopyReadLineText counts
  // the line-ending style's last byte; a lone \r before the style is known).
  uint64_t quoted_line_ends() const { return quoted_line_ends_; }
  // Fixes the line-ending style before the first record (a worker parsing a
  // later part of the input takes the style the first line set).
  void set_eol(Eol eol) { eol_ = eol; }

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

  // The first c in [from, from + n) that no backslash escapes (an odd run
  // of backslashes before it, counted back to the line's start): in the
  // text format a backslash takes the next byte as data, a newline too
  // (PostgreSQL's CopyReadLineText).
  static const char* unescaped_chr(const char* line_begin, const char* from, char c, size_t n) {
    const char* end = from + n;
    for (const char* q = from; q < end; ++q) {
      q = static_cast<const char*>(std::memchr(q, c, static_cast<size_t>(end - q)));
      if (q == nullptr) return nullptr;
      if (!escaped_at(line_begin, q)) return q;
    }
    return nullptr;
  }

 public:
  // Whether an odd run of backslashes ends just before p (after begin).
  static bool escaped_at(const char* begin, const char* p) {
    size_t run = 0;
    while (p - run > begin && p[-1 - static_cast<std::ptrdiff_t>(run)] == '\\') ++run;
    return run % 2 == 1;
  }

 private:
  ParseResult parse_text(const std::string& buf, size_t& pos, bool at_eof) {
    const char* begin = buf.data() + pos;
    const char* end = buf.data() + buf.size();
    const char* nl = unescaped_chr(begin, begin, '\n', static_cast<size_t>(end - begin));
    if (eol_ == Eol::unknown) {
      // The first line fixes the style: \n, \r\n or a lone \r.
      const char* cr = unescaped_chr(begin, begin, '\r', static_cast<size_t>((nl ? nl : end) - begin));
      if (cr && cr + 1 == end && !at_eof) return ParseResult::need_more;
      if (cr && (cr + 1 == end || cr[1] != '\n')) eol_ = Eol::cr;
      else if (nl) eol_ = cr ? Eol::crnl : Eol::nl;
    }
    const char* line_end;
    if (eol_ == Eol::cr) {
      const char* cr = unescaped_chr(begin, begin, '\r', static_cast<size_t>(end - begin));
      if (!cr && !at_eof) return ParseResult::need_more;
      line_end = cr ? cr : end;
      if (unescaped_chr(begin, begin, '\n', static_cast<size_t>(line_end - begin)))
        throw EolError{"literal newline found in data", "Use \"\\n\" to represent newline."};
      pos = static_cast<size_t>((cr ? cr + 1 : end) - buf.data());
    } else {
      if (!nl && !at_eof) return ParseResult::need_more;
      line_end = nl ? nl : end;
      const bool crnl = nl && line_end > begin && line_end[-1] == '\r';
      if (nl && eol_ == Eol::crnl && !crnl)
        throw EolError{"literal newline found in data", "Use \"\\n\" to represent newline."};
      if (crnl && eol_ == Eol::crnl) --line_end;
      if (unescaped_chr(begin, begin, '\r', static_cast<size_t>(line_end - begin)))
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
    const char counted_eol = eol_ == Eol::nl ? '\n' : '\r';
    nfields_ = 0;
    quoted_line_ends_ = 0;
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
              quoted_line_ends_ += c == counted_eol;
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
  uint64_t quoted_line_ends_ = 0;
};

}  // namespace tally::executor::dml
