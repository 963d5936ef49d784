#pragma once
// Constraints on the tokens (model.norm, MODEL.md §10): what X(0) is made of
// the data's tokens and how the velocity is projected so that the exact flow
// keeps the constraint, with the transposed products the adjoint needs.
// For every token x (a row of d values) of X:
//
//   initial:    X(0) = initial(X_data)
//   project:    F~(x) = Pi(x) F(x), the velocity the flow follows
//   adjoint:    for a cotangent c of F~ at x, with F the unprojected field,
//               <c, dF~> = <Pi(x)^T c, dF> + <state(x, F, c), dx>
//
// Each norm is one file of src/model/norms/, found there by the build (see
// the end of this header).
#include "mft/core/config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mft {

class TokenNorm {
public:
  virtual ~TokenNorm() = default;
  // Whether the norm leaves the tokens and the velocity alone (then none of
  // the rest is called).
  virtual bool identity() const { return false; }

  // X (`tokens` rows of d) becomes X(0) in place. InputError naming the
  // key for tokens it cannot take (a zero token on the sphere).
  virtual void initial(double *X, long long tokens, long long d) const = 0;
  // The cotangent a of X(0) becomes that of the data's tokens X (in place).
  virtual void initial_vjp(const double *X, double *a, long long tokens, long long d) const = 0;

  // F (the velocity at X) becomes Pi(X) F in place.
  virtual void project(const double *X, double *F, long long tokens, long long d) const = 0;
  // C becomes Pi(X)^T C in place (what the field's own transposed products
  // take), after `dX += state(X, F, C)` (F the unprojected velocity at X).
  virtual void vjp(const double *X, const double *F, double *C, double *dX, long long tokens, long long d) const = 0;

  // How far the tokens X are from the constraint (the sphere: the largest
  // | |x| - 1 |), which the exact flow keeps at 0 and a Runge-Kutta step
  // to its local error.
  virtual double drift(const double *X, long long tokens, long long d) const = 0;
};

// The norm named by model.norm, with its keys from `model`; InputError
// naming the key for an unknown name.
std::unique_ptr<TokenNorm> make_token_norm(const ModelConfig &model);

} // namespace mft

// A norm's file src/model/norms/NAME.cpp holds, at the start of a line, its
// registration line (read by the build: cmake/registries.cmake)
//   MFT_NORM(NAME, "help for --help")
// a line MFT_KEY(key, type, default, check, "help") for each model.KEY it
// owns (a member of ModelConfig), and defines
// make_NAME_norm(const ModelConfig &model) in namespace mft.
#define MFT_NORM(name, help)
