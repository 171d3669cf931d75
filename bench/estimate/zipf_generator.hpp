#pragma once
// Zipf(s) sampler over ranks 1..n by rejection-inversion (Hörmann and
// Derflinger 1996, as in Apache Commons RNG): O(1) per draw for any n, so
// 10^8-row data sets with 10^8 possible keys are generated in seconds.
#include <cmath>
#include <cstdint>
#include <random>

namespace tally::bench {

class ZipfGenerator {
 public:
  ZipfGenerator(uint64_t n, double exponent) : n_(static_cast<double>(n)), s_(exponent) {
    h_integral_x1_ = h_integral(1.5) - 1.0;
    h_integral_n_ = h_integral(n_ + 0.5);
    squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
  }

  template <class Rng>
  uint64_t operator()(Rng& rng) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    while (true) {
      const double u = h_integral_n_ + uniform(rng) * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > n_) k = n_;
      if (k - x <= squeeze_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<uint64_t>(k);
    }
  }

 private:
  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  double h_integral(double x) const {
    const double log_x = std::log(x);
    return helper2((1.0 - s_) * log_x) * log_x;
  }
  double h_integral_inverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;
    return std::exp(helper1(t) * x);
  }
  static double helper1(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)); }
  static double helper2(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x)); }

  double n_;
  double s_;
  double h_integral_x1_ = 0;
  double h_integral_n_ = 0;
  double squeeze_ = 0;
};

}  // namespace tally::bench
