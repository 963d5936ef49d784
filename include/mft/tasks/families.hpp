#pragma once
// Distribution families as data (MODEL.md §7): sequence i is a token measure
// of n iid samples from a member mu_i of one family, the family's parameter
// varying across sequences. [B] states that the NTK's V-part is injective
// when the log-sum-exp functions Lambda_{mu_i} are linearly independent
// modulo affine functions; these families let a user check both sides.
//
//   discrete      n samples of N(0, I) or U([-1,1]^d): distinct discrete measures
//   cube          uniform on [-r_i, r_i]^d          Lambda = sum_k log(sinh(r z_k)/(r z_k))
//   laplace       sqrt(E) N(0, v_i I), E ~ Exp(1)   Lambda = -log(1 - v_i |z|^2 / 2)
//   mixture       1/2 N(a_i e, s^2 I) + 1/2 N(-a_i e, s^2 I)
//                                                   Lambda = s^2 |z|^2 / 2 + log cosh(a_i <e, z>)
//   gaussian-cov  N(a_i e, v_i I)                   Lambda = a_i <e, z> + v_i |z|^2 / 2
//
// e = (1, ..., 1)/sqrt(d). Targets: y_i = <u, mean_j x_ij> + q mean_j |x_ij|^2 / d,
// u ~ N(0, I) fixed by the data seed, q = families.quadratic.
#include "mft/core/config.hpp"
#include "mft/tasks/data.hpp"

#include <string>
#include <vector>

namespace mft {

// One member of a family: the parameters of sequence i.
struct FamilyMember {
  std::string kind;
  double value = 0.0;    // r_i (cube), v_i (laplace), a_i (mixture, gaussian-cov)
  double variance = 1.0; // v_i of gaussian-cov
  double sigma = 0.5;    // s of mixture
  bool uniform = false;  // discrete: U([-1,1]^d) instead of N(0, I)
};

// The members of the configured family, one per sequence (N of them).
std::vector<FamilyMember> family_members(const Config &config);

// The data of data.task = families.
TokenData make_families(const Config &config);

// True where the family has a closed-form Lambda (all but discrete).
bool has_population_cgf(const std::string &kind);

// The population Lambda_mu(z) of a member, z in R^d. Throws InputError when
// z lies outside its domain (laplace needs v |z|^2 < 2).
double population_cgf(const FamilyMember &member, const double *z, long long d);

} // namespace mft
