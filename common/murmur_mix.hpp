#pragma once
// The 64-bit finalizer of MurmurHash3 (fmix64): a bijection with full
// avalanche, so distinct 64-bit inputs never collide and every output bit
// depends on every input bit (dense keys 0, 1, 2, ... spread evenly over
// high and low bits alike).
#include <cstdint>

namespace tally {

constexpr uint64_t murmur_fmix64(uint64_t bits) {
  bits ^= bits >> 33;
  bits *= 0xff51afd7ed558ccdull;
  bits ^= bits >> 33;
  bits *= 0xc4ceb9fe1a85ec53ull;
  bits ^= bits >> 33;
  return bits;
}

}  // namespace tally
