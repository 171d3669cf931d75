#pragma once
// Finds where COPY FROM input can be cut between records, so that segments
// of whole records go to different parse workers: a record ends at a line
// terminator outside CSV quotes. The quote state carries over from one call
// to the next, so a quoted field may span any number of input blocks.
#include <cstring>
#include <string>

#include "executor/dml/copy_options.hpp"
#include "executor/dml/copy_record_parser.hpp"

namespace tally::executor::dml {

class RecordSplitter {
 public:
  // eol: the style the first line set (a lone CR ends records in Eol::cr).
  RecordSplitter(const CopyOptions& o, Eol eol)
      : csv_(o.csv), quote_(o.quote), escape_(o.escape), terminator_(eol == Eol::cr ? '\r' : '\n') {}

  // Scans buf past what earlier calls scanned; returns the offset just past
  // the last record end found so far (0: none).
  size_t scan(const std::string& buf) {
    const char* d = buf.data();
    const size_t n = buf.size();
    size_t i = scanned_;
    if (!csv_ || (!in_quote_ && std::memchr(d + i, quote_, n - i) == nullptr)) {
      // No quotes ahead: the last terminator is the last record end; in the
      // text format, the last that no backslash escapes (buf starts at a
      // record, so a run of backslashes never reaches back past it).
      for (size_t to = n; to > i;) {
        const auto* r = static_cast<const char*>(memrchr(d + i, terminator_, to - i));
        if (r == nullptr) break;
        if (csv_ || !RecordParser::escaped_at(d, r)) {
          last_end_ = static_cast<size_t>(r - d) + 1;
          break;
        }
        to = static_cast<size_t>(r - d);
      }
      scanned_ = n;
      return last_end_;
    }
    for (; i < n; ++i) {
      const char c = d[i];
      if (in_quote_) {
        if (c == escape_ && escape_ != quote_) {
          if (i + 1 >= n) break;  // decided by the next byte: rescan it with more input
          if (d[i + 1] == quote_ || d[i + 1] == escape_) {
            ++i;
            continue;
          }
        }
        // With escape == quote a doubled quote toggles twice: still quoted.
        if (c == quote_) in_quote_ = false;
      } else if (c == quote_) {
        in_quote_ = true;
      } else if (c == terminator_) {
        last_end_ = i + 1;
      }
    }
    scanned_ = i;
    return last_end_;
  }

  // The first `bytes` of the buffer were cut off.
  void consumed(size_t bytes) {
    scanned_ -= bytes;
    last_end_ = last_end_ > bytes ? last_end_ - bytes : 0;
  }

 private:
  bool csv_;
  char quote_, escape_, terminator_;
  bool in_quote_ = false;
  size_t scanned_ = 0;
  size_t last_end_ = 0;
};

}  // namespace tally::executor::dml
