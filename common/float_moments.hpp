#pragma once
// Youngs-Cramer moments of float8 inputs, as PostgreSQL keeps them
// (float8_accum / float8_regr_accum, and float8_combine / float8_regr_combine
// to merge two): the state every engine's float variance, stddev and
// regression aggregates carry, and whatever merges engines' partial states.
namespace tally {

struct FloatMoments {
  double n = 0, sx = 0, sxx = 0;
  void add(double x);
  void combine(const FloatMoments& other);
};
struct FloatMoments2 {
  double n = 0, sx = 0, sxx = 0, sy = 0, syy = 0, sxy = 0;
  void add(double y, double x);  // PostgreSQL's argument order: (Y, X)
  void combine(const FloatMoments2& other);
};

}  // namespace tally
