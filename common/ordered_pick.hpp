#pragma once
// What an ordered-set aggregate reads of its group's sorted values, and the
// top-n shape of those reads: shared by the engines that keep an ordered
// aggregate's rows (common/ordered_rows.hpp), the aggregation spec that
// carries each aggregate's picks to them, and the device code that picks.
#include <math.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace tally {

// What an ordered-set aggregate reads of its group's sorted values: the one
// or two positions of percentile_cont or percentile_disc at `fraction`
// (a constant of the statement, 0 <= fraction <= 1), or the one of a rank
// a top-n per partition keeps (nth). An engine that knows
// them copies back only those values, not the group's every value.
struct OrderedPick {
  // nth: the value at 0-based position `fraction` (a whole number), or the
  // last one when the group has fewer (its reader then gives NULL).
  enum class Kind : uint8_t { cont, disc, nth };
  Kind kind = Kind::cont;
  double fraction = 0;
  bool descending = false;  // WITHIN GROUP (ORDER BY ... DESC): positions counted from the end
};

// Compiled by nvcc as well: the device computes the same positions.
#if defined(__CUDACC__)
#define TALLY_ORDERED_PICK_FN __host__ __device__ inline
#else
#define TALLY_ORDERED_PICK_FN inline
#endif

// Positions pick p reads among n >= 1 values sorted ascending, in out[0..2):
// the arithmetic of executor/finalize.hpp (percentile_cont_of: floor and
// ceil of fraction * (n - 1); percentile_disc_position: ceil(fraction * n),
// at least the first), mirrored for DESC. Returns how many (cont: 2, equal
// when the position is a row; disc: 1).
TALLY_ORDERED_PICK_FN int ordered_pick_positions(const OrderedPick& p, uint64_t n, uint64_t* out) {
  int count = 0;
  if (p.kind == OrderedPick::Kind::cont) {
    const double position = p.fraction * static_cast<double>(n - 1);
    out[0] = static_cast<uint64_t>(floor(position));
    out[1] = static_cast<uint64_t>(ceil(position));
    count = 2;
  } else if (p.kind == OrderedPick::Kind::nth) {
    out[0] = static_cast<uint64_t>(p.fraction);
    count = 1;
  } else {
    const auto rownum = static_cast<int64_t>(ceil(p.fraction * static_cast<double>(n)));
    out[0] = rownum <= 1 ? 0 : static_cast<uint64_t>((rownum < static_cast<int64_t>(n) ? rownum : static_cast<int64_t>(n)) - 1);
    count = 1;
  }
  for (int i = 0; i < count; ++i) {
    if (out[i] > n - 1) out[i] = n - 1;  // never past the group, whatever the rounding
    if (p.descending) out[i] = n - 1 - out[i];
  }
  return count;
}

// Positions every group keeps for `picks`: each pick's 1 or 2.
inline int ordered_picks_per_group(const std::vector<OrderedPick>& picks) {
  int per = 0;
  for (const OrderedPick& p : picks) per += p.kind == OrderedPick::Kind::cont ? 2 : 1;
  return per;
}

// The most picks one slot's aggregates may read where an engine picks them
// itself (a kernel parameter holds them).
inline constexpr int kMaxPicks = 16;

// The most ranks a top-codes table keeps per key (top_codes_shape).
inline constexpr int kMaxTopCodes = 8;

// A top-n per partition's picks (each an nth of one of the k first ranks,
// all counted from the same end) need only each key's row count and its k
// best codes, which an engine keeps as the rows pass, without a sort.
struct TopCodesShape {
  int k = 0;             // ranks kept per key
  bool largest = false;  // the picks count from the end: the k largest codes
};

// The shape a table needs for `picks`, or nullopt when a pick is not an nth
// of the first kMaxTopCodes ranks or the picks count from both ends.
inline std::optional<TopCodesShape> top_codes_shape(const std::vector<OrderedPick>& picks) {
  if (picks.empty() || picks.size() > static_cast<size_t>(kMaxPicks)) return std::nullopt;
  TopCodesShape shape;
  shape.largest = picks.front().descending;
  for (const OrderedPick& p : picks) {
    if (p.kind != OrderedPick::Kind::nth || p.descending != shape.largest || !(p.fraction >= 0) ||
        p.fraction >= kMaxTopCodes || p.fraction != static_cast<double>(static_cast<int>(p.fraction)))
      return std::nullopt;
    shape.k = std::max(shape.k, static_cast<int>(p.fraction) + 1);
  }
  return shape;
}

}  // namespace tally
