#include "executor/dml/copy_from.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "executor/dml/column_default.hpp"
#include "executor/dml/copy_segment.hpp"
#include "executor/dml/copy_splitter.hpp"
#include "executor/types/thread_settings.hpp"
#include "executor/types/type_io.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {
namespace {

// Input bytes per segment: large enough that handing a segment to a worker
// and appending its columns costs little next to parsing it, small enough
// that every worker has several while the input streams in.
constexpr size_t segment_bytes = 1 << 20;
// Segments parsed or waiting per worker: bounds the memory a fast reader can
// run ahead of the appender with, while keeping every worker busy.
constexpr size_t segments_per_worker = 2;
// Workers beyond this only contend for the input and the appender.
constexpr int max_workers = 64;

struct SegmentJob {
  CopySegment seg;
  bool done = false;  // guarded by SegmentWorkers::mutex_
};

// Parse workers of one COPY: threads started (start()) when the input is more
// than one segment, stopped and joined when the COPY ends (an error included).
class SegmentWorkers {
 public:
  SegmentWorkers(const CopyPlan& plan, int workers) : plan_(plan), workers_(workers) {}
  ~SegmentWorkers() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      queue_.clear();
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // On the statement's thread: workers read timestamptz text without an
  // offset in the session's zone, and dates in its DateStyle's order.
  void start() {
    types::ThreadSettings settings = types::current_thread_settings();
    for (int i = 0; i < workers_; ++i) {
      threads_.emplace_back([this, settings] {
        const types::ThreadSettingsScope settings_scope(settings);
        work();
      });
    }
  }
  // From any thread, after start().
  void submit(std::shared_ptr<SegmentJob> job) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(job));
    }
    ready_.notify_one();
  }
  void wait(const SegmentJob& job) {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return job.done; });
  }

 private:
  void work() {
    for (;;) {
      std::shared_ptr<SegmentJob> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      parse_segment(plan_, job->seg);
      {
        std::lock_guard lock(mutex_);
        job->done = true;
      }
      finished_.notify_all();
    }
  }

  const CopyPlan& plan_;
  const int workers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_, finished_;
  std::deque<std::shared_ptr<SegmentJob>> queue_;
  bool stop_ = false;
};

// The line-ending style of the input, which its first line fixes (unknown
// when the first line does not end or does not parse: then the first
// segment, parsed like the rest, reports or settles it).
template <class Fill>
Eol first_line_eol(const CopyOptions& o, size_t fields, std::string& buf, const bool& at_eof, Fill&& fill) {
  RecordParser probe(o, fields);
  for (;;) {
    size_t pos = 0;
    try {
      if (probe.parse(buf, pos, at_eof) != ParseResult::need_more) return probe.eol();
    } catch (...) {
      return probe.eol();
    }
    if (at_eof) return probe.eol();
    fill(buf.size() + segment_bytes);
  }
}

// Reads the input and cuts it into segments for the workers on a thread of
// its own, so that reading (a copy of every input byte; for STDIN the
// client's messages) overlaps the statement's thread appending parsed
// segments: both are serial, and one after the other they bounded a COPY on
// many cores. Stopped and joined when destroyed; a read error is rethrown by
// next().
class SegmentReader {
 public:
  SegmentReader(CopySource& source, std::string buf, bool at_eof, RecordSplitter splitter, SegmentWorkers& pool,
                size_t window)
      : source_(source), buf_(std::move(buf)), at_eof_(at_eof), splitter_(splitter), pool_(pool), window_(window) {
    thread_ = std::thread([this] { run(); });
  }
  ~SegmentReader() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  // The next segment in input order, submitted to the workers; null after
  // the last.
  std::shared_ptr<SegmentJob> next() {
    std::shared_ptr<SegmentJob> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !cut_.empty() || done_ || error_; });
      if (error_ && cut_.empty()) std::rethrow_exception(error_);
      if (cut_.empty()) return nullptr;
      job = std::move(cut_.front());
      cut_.pop_front();
    }
    changed_.notify_all();
    return job;
  }

 private:
  void fill(size_t want) {
    while (!at_eof_ && buf_.size() < want)
      if (!source_.next(buf_)) at_eof_ = true;
  }

  void run() {
    try {
      bool first = true;
      for (;;) {
        fill(segment_bytes);
        const size_t cut = at_eof_ ? buf_.size() : splitter_.scan(buf_);
        if (cut == 0 && !at_eof_) {
          // One record longer than a segment: read until it ends.
          fill(buf_.size() + segment_bytes);
          continue;
        }
        auto job = std::make_shared<SegmentJob>();
        job->seg.first = first;
        first = false;
        job->seg.input = std::move(buf_);
        buf_.reserve(2 * segment_bytes);  // no regrowth while the next segment fills
        buf_.assign(job->seg.input, cut);
        job->seg.input.resize(cut);
        splitter_.consumed(cut);
        const bool last = at_eof_ && buf_.empty();
        {
          // Segments cut and not yet appended stay within the window: a fast
          // reader must not hold the whole input in memory.
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [&] { return stop_ || cut_.size() < window_; });
          if (stop_) return;
          cut_.push_back(job);
          done_ = last;
        }
        pool_.submit(std::move(job));
        changed_.notify_all();
        if (last) return;
      }
    } catch (...) {
      {
        std::lock_guard lock(mutex_);
        error_ = std::current_exception();
      }
      changed_.notify_all();
    }
  }

  CopySource& source_;
  std::string buf_;
  bool at_eof_;
  RecordSplitter splitter_;
  SegmentWorkers& pool_;
  const size_t window_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<SegmentJob>> cut_;  // in input order
  bool stop_ = false, done_ = false;
  std::exception_ptr error_;
  std::thread thread_;
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

namespace {

// Fills the columns a COPY's column list leaves out with their DEFAULT, as
// PostgreSQL does: a constant is computed once per segment, nextval per row.
void fill_defaults(StatementContext& ctx, const CopyPlan& plan, storage::TableAppender& appender, CopySegment& s) {
  const catalog::TableDef& def = *plan.def;
  for (const int u : plan.untargeted) {
    const auto c = static_cast<size_t>(u);
    const catalog::ColumnDef& col = def.columns[c];
    if (col.default_expr.empty() || s.rows == 0) continue;
    const bool per_row = !nextval_sequence(col.default_expr).empty();
    const size_t width = plan.widths[c];
    s.data[c].resize(s.rows * width);
    std::vector<uint8_t> slot(width);
    for (size_t row = 0; row < s.rows; ++row) {
      if (row == 0 || per_row) {
        const ConstantValue v = cast_constant(ctx, column_default(ctx, col), col.type, false, col.name);
        if (v.kind == ConstantValue::Kind::null) {
          if (col.not_null)
            throw Error(SqlState::not_null_violation,
                        "null value in column \"" + col.name + "\" of relation \"" + def.name + "\" violates not-null constraint");
          break;  // the segment already holds NULLs
        }
        if (is_string_stored(col.type.id)) {
          std::string scratch;
          const std::string_view bytes = types::stored_string(col.type.id, v.text, scratch);
          const int32_t code = appender.intern(u, bytes, storage::StringDictionary::hash(bytes));
          std::memcpy(slot.data(), &code, sizeof code);
        } else {
          types::parse_text_value(col.type, v.text, slot.data());
        }
      }
      std::memcpy(s.data[c].data() + row * width, slot.data(), width);
      if (!s.valid[c].empty()) s.valid[c][row] = 1;
    }
  }
}

}  // namespace

uint64_t copy_from(StatementContext& ctx, const catalog::TableDef& def, const std::vector<int>& targets,
                   const CopyOptions& o, CopySource& source, bool& end_marker_seen) {
  end_marker_seen = false;
  CopyPlan plan(def, targets, o);
  auto appender = ctx.begin_append(def.oid);
  for (size_t i = 0; i < targets.size(); ++i)
    if (plan.kinds[i] == CopyPlan::Kind::text || plan.kinds[i] == CopyPlan::Kind::bytea)
      plan.dicts[static_cast<size_t>(targets[i])] = &appender->working_dictionary(targets[i]);
  const std::string context_prefix = "COPY " + def.name + ", line ";

  std::string buf;
  bool at_eof = false;
  auto fill = [&](size_t want) {
    while (!at_eof && buf.size() < want)
      if (!source.next(buf)) at_eof = true;
  };
  fill(segment_bytes);
  plan.eol = first_line_eol(o, targets.size(), buf, at_eof, fill);
  RecordSplitter splitter(o, plan.eol);
  const int threads = ctx.threads > 0 ? ctx.threads : static_cast<int>(std::thread::hardware_concurrency());
  const int workers = std::clamp(threads, 1, max_workers);
  uint64_t lines = 0, rows = 0;

  // Appends a parsed segment: segments go in input order, so the first error
  // in the input is the one reported, with its line. False after an end marker.
  auto append = [&](CopySegment& s) {
    if (s.error) {
      try {
        std::rethrow_exception(s.error);
      } catch (Error& e) {
        e.with_context(context_prefix + std::to_string(lines + s.error_line) + s.error_context);
        throw;
      }
    }
    for (const auto& m : s.misses) {
      const int32_t code =
          appender->intern(m.column, std::string_view(s.miss_bytes).substr(m.offset, m.size), m.hash);
      std::memcpy(s.data[static_cast<size_t>(m.column)].data() + size_t{m.row} * sizeof code, &code, sizeof code);
    }
    fill_defaults(ctx, plan, *appender, s);
    if (s.rows > 0) {
      std::vector<const uint8_t*> data, valid;
      for (size_t c = 0; c < s.data.size(); ++c) {
        data.push_back(s.data[c].data());
        valid.push_back(s.valid[c].empty() ? nullptr : s.valid[c].data());
      }
      appender->append_rows(s.rows, data, valid);
    }
    rows += s.rows;
    lines += s.lines;
    ctx.check_cancel();
    if (s.end_marker) end_marker_seen = true;  // what follows it is never loaded
    return !s.end_marker;
  };

  if (at_eof) {
    // The whole input is one segment (small COPYs): no threads.
    CopySegment seg;
    seg.first = true;
    seg.input = std::move(buf);
    parse_segment(plan, seg);
    append(seg);
  } else {
    SegmentWorkers pool(plan, workers);
    pool.start();
    // After the pool: stopped (its thread joined) before the pool is.
    SegmentReader reader(source, std::move(buf), at_eof, splitter, pool,
                         segments_per_worker * static_cast<size_t>(workers));
    while (auto job = reader.next()) {
      pool.wait(*job);
      if (!append(job->seg)) break;
    }
  }
  ctx.check_cancel();
  appender->commit();
  return rows;
}

}  // namespace tally::executor::dml
