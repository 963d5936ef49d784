#include "mft/core/integrators.hpp"

#include "mft/core/error.hpp"
#include "mft/core/petsc_session.hpp"

namespace mft {

const std::vector<IntegratorType> &integrator_types() {
  static const std::vector<IntegratorType> table = {
      {TSEULER, true}, // in depth as PETSc's RK tableau 1fe, which has the adjoint
      {TSRK, true},    // the tableau: depth.rk_type or -PREFIX_ts_rk_type
      {TSSSP, false},  // forward only in depth
  };
  return table;
}

std::vector<std::string> integrator_names() {
  std::vector<std::string> out;
  for (const IntegratorType &t : integrator_types()) out.push_back(t.name);
  return out;
}

std::string integrators_with_adjoint() {
  std::vector<std::string> out;
  for (const IntegratorType &t : integrator_types())
    if (t.adjoint) out.push_back(t.name);
  return comma_list(out);
}

const IntegratorType *find_integrator(const std::string &name) {
  for (const IntegratorType &t : integrator_types())
    if (name == t.name) return &t;
  return nullptr;
}

long long ts_stages(TS ts) {
  TSType type;
  MFT_PETSC(TSGetType(ts, &type));
  PetscInt stages = 1;
  const std::string name = type;
  if (name == TSRK) MFT_PETSC(TSRKGetTableau(ts, &stages, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  else if (name == TSSSP) MFT_PETSC(TSSSPGetNumStages(ts, &stages));
  else if (name != TSEULER) throw Error("ts_stages: no stage count known for TS type " + name);
  return stages;
}

} // namespace mft
