#pragma once
// What a consumer computed from a chunk of rows ahead of taking it, on a
// worker thread (ChunkSink::prepare, GroupAggregator::prepare), for the
// step that takes the chunks in order. Each consumer derives its own.

namespace tally::executor {

struct PreparedWork {
  virtual ~PreparedWork() = default;
};

}  // namespace tally::executor
