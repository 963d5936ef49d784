#pragma once
// The integrators of mft's ODEs (depth: the tokens and the adjoint; training
// time: the gradient flow): PETSc TS types, explicit and one-step, and what
// mft needs of each. PETSc answers the rest (a tableau's stages, a type's
// options): adding a PETSc type is adding its line here.
#include <petscts.h>

#include <string>
#include <vector>

namespace mft {

struct IntegratorType {
  const char *name; // the TSType
  bool adjoint;     // PETSc has its discrete adjoint (TSAdjointSolve): training may use it in depth
};

// The types depth.ts_type and train.ts_type accept, in that order.
const std::vector<IntegratorType> &integrator_types();
std::vector<std::string> integrator_names();
// Those with the adjoint, as "a, b".
std::string integrators_with_adjoint();
// The entry of `name`, or null. (set_explicit_ts_type, petsc_session.hpp,
// refuses a -PREFIX_ts_type that is not one.)
const IntegratorType *find_integrator(const std::string &name);

// The stages of one step of `ts`, as PETSc's tableau of its type says
// (euler 1, rk its tableau's, ssp its stage count).
long long ts_stages(TS ts);

} // namespace mft
