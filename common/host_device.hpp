#pragma once
// TALLY_HD marks a function compiled for the host and, under nvcc, for the
// device too: the engines compute the same arithmetic on both sides.
#if defined(__CUDACC__)
#define TALLY_HD __host__ __device__ __forceinline__
#else
#define TALLY_HD inline
#endif
