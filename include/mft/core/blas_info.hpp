#pragma once
// Which BLAS kernels run, and whether they use the CPU. OpenBLAS picks its
// kernels from the CPU model it reads; in some virtual machines it reads a
// model it does not know and falls back to an old core (Prescott: SSE3),
// which measured 4x slower DGEMM than its SkylakeX kernels on an AVX-512
// machine. OPENBLAS_CORETYPE, set before the program starts, overrides it
// (scripts/env.sh sets it from the CPU's flags).
#include <string>

namespace mft {

struct BlasInfo {
  std::string core;   // OpenBLAS's core name (empty: not OpenBLAS, or unknown)
  std::string advice; // how to make it faster on this CPU (empty: nothing to do)
  // OpenBLAS's build and the core it runs ("OpenBLAS 0.3.21 ... SkylakeX
  // ..."): its kernels differ per core, and so may the rounding of a run.
  std::string config;
};

BlasInfo blas_info();

// One line for the run headers: "OpenBLAS core SkylakeX", with the advice.
std::string blas_summary();

// What a run file records (root attribute blas): config, or "not OpenBLAS".
std::string blas_provenance();

} // namespace mft
