#include "mft/core/log_events.hpp"

#include "mft/core/error.hpp"
#include "mft/core/petsc_session.hpp"

namespace mft {

const LogEvents &log_events() {
  static const LogEvents events = [] {
    LogEvents e{};
    PetscClassId mft_class = 0;
    petsc_check(PetscClassIdRegister("mft", &mft_class), "PetscClassIdRegister");
    const struct {
      const char *name;
      PetscLogEvent *event;
    } table[] = {{"AttnForward", &e.attention_forward}, {"AttnVJP", &e.attention_vjp},
                 {"MlpForward", &e.mlp_forward},        {"MlpVJP", &e.mlp_vjp},
                 {"FieldAllreduce", &e.allreduce},      {"RunFileWrite", &e.file_write},
                 {"NtkGram", &e.ntk}};
    for (const auto &entry : table)
      petsc_check(PetscLogEventRegister(entry.name, mft_class, entry.event), "PetscLogEventRegister");
    return e;
  }();
  return events;
}

LogScope::LogScope(PetscLogEvent LogEvents::*which, double flops) {
  PetscBool initialized = PETSC_FALSE;
  PetscInitialized(&initialized);
  if (!initialized) return;
  event_ = log_events().*which;
  active_ = true;
  PetscLogEventBegin(event_, 0, 0, 0, 0);
  if (flops > 0) PetscLogFlops(flops);
}

LogScope::~LogScope() {
  if (active_) PetscLogEventEnd(event_, 0, 0, 0, 0);
}

} // namespace mft
