#pragma once
// PETSc user log events: with -log_view, PETSc's table lists each of them
// beside its own (TSStep, TSFunctionEval, ...) with time, share and, where
// the flops are logged, the rate in Mflop/s. Registered once per process,
// after PetscInitialize, and read-only afterwards.
#include <petscsys.h>

namespace mft {

struct LogEvents {
  PetscLogEvent attention_forward; // AttnForward: the attention kernel's velocity (flops: its GEMMs)
  PetscLogEvent attention_vjp;     // AttnVJP: its vector-Jacobian product
  PetscLogEvent mlp_forward;       // MlpForward
  PetscLogEvent mlp_vjp;           // MlpVJP
  PetscLogEvent allreduce;         // FieldAllreduce: summing the ranks' shares of a field evaluation or VJP
  PetscLogEvent file_write;        // RunFileWrite: a snapshot (and its history rows) into the run file
  PetscLogEvent ntk;               // NtkGram: the NTK's Jacobian rows, Gram and spectrum
};

const LogEvents &log_events();

// Begins the event `which` of log_events() on construction and ends it on
// destruction, logging `flops` (PetscLogFlops) in between. Does nothing
// before PetscInitialize (a kernel used outside an mft program).
class LogScope {
public:
  explicit LogScope(PetscLogEvent LogEvents::*which, double flops = 0.0);
  ~LogScope();
  LogScope(const LogScope &) = delete;
  LogScope &operator=(const LogScope &) = delete;

private:
  PetscLogEvent event_ = 0;
  bool active_ = false;
};

} // namespace mft
