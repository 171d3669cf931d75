#include "executor/dictionary_order.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <numeric>

#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel_sort.hpp"

namespace tally::executor {

namespace {

// The orders last made, newest last. A few columns' worth: a URL column of
// millions of entries holds 8 bytes an entry here.
constexpr size_t kCachedOrders = 8;

struct CachedOrder {
  std::weak_ptr<const void> store;
  int32_t size = 0;
  std::shared_ptr<const DictionaryOrder> order;
};

std::mutex cache_mutex;
std::deque<CachedOrder> cache;

}  // namespace

std::shared_ptr<const DictionaryOrder> dictionary_order(const storage::StringDictionary& dictionary, int threads) {
  const std::weak_ptr<const void> store = dictionary.store_identity();
  // The same store (owner), not merely one at the same address.
  const auto same_store = [&store](const CachedOrder& c) {
    return !c.store.owner_before(store) && !store.owner_before(c.store);
  };
  const int32_t size = dictionary.size();
  {
    const std::lock_guard lock(cache_mutex);
    for (const CachedOrder& c : cache) {
      if (same_store(c) && c.size == size) return c.order;
    }
  }
  auto order = std::make_shared<DictionaryOrder>();
  order->code_of_rank.resize(static_cast<size_t>(size));
  std::iota(order->code_of_rank.begin(), order->code_of_rank.end(), 0);
  // Entries are distinct: a strict total order.
  const auto less = [&dictionary](int32_t a, int32_t b) {
    tick_on_this_thread();
    return dictionary.at(a) < dictionary.at(b);
  };
  cpu::sort_parallel(order->code_of_rank.data(), order->code_of_rank.size(), less, threads);
  order->rank_of_code.resize(static_cast<size_t>(size));
  for (int32_t r = 0; r < size; ++r) order->rank_of_code[static_cast<size_t>(order->code_of_rank[static_cast<size_t>(r)])] = r;
  const std::lock_guard lock(cache_mutex);
  // A store whose older size is cached gets the newer one in its place.
  std::erase_if(cache, [&](const CachedOrder& c) { return same_store(c) || c.store.expired(); });
  if (cache.size() == kCachedOrders) cache.pop_front();
  cache.push_back(CachedOrder{store, size, order});
  return order;
}

Vector entries_of_ranks(const Vector& ranks, const DictionaryOrder& order,
                        std::shared_ptr<const storage::StringDictionary> dictionary, SqlType type) {
  Vector out(type);
  out.dictionary = std::move(dictionary);
  out.count = ranks.count;
  out.nulls = ranks.nulls;
  out.codes.resize(ranks.count, 0);
  const int64_t* rank = ranks.int_data();
  for (size_t i = 0; i < ranks.count; ++i) {
    if (!ranks.null_at(i)) out.codes[i] = order.code_of_rank[static_cast<size_t>(rank[i])];
  }
  return out;
}

}  // namespace tally::executor
