#include "mft/analysis/ntk.hpp"

#include "mft/core/blas.hpp"
#include "mft/core/error.hpp"
#include "mft/core/linalg.hpp"

#include <cmath>

namespace mft {
namespace {

// [begin, end) of group `part` in the flat layout, and the time scale of the
// species it belongs to; two ranges for `all` (heads, then neurons).
struct Range {
  long long begin, end;
  double scale;
};

std::vector<Range> ranges(const std::string &part, const Particles &p) {
  const double L = static_cast<double>(p.heads.L);
  const double heads = static_cast<double>(p.heads.M) * L;
  const double neurons = static_cast<double>(std::max<long long>(p.neurons.M, 1)) * L;
  if (part == "V") return {{p.offset_V(), p.offset_W1(), heads}};
  if (part == "QK") return {{p.offset_Q(), p.offset_V(), heads}};
  if (part == "mlp") return {{p.offset_W1(), p.local_size(), neurons}};
  return {{p.offset_Q(), p.offset_W1(), heads}, {p.offset_W1(), p.local_size(), neurons}};
}

} // namespace

void check_ntk_part(const std::string &part, const Particles &particles) {
  if (part != "V" && part != "QK" && part != "mlp" && part != "all")
    throw InputError(key_error("ntk.part", part, "must be one of V, QK, mlp, all"));
  if (part == "mlp" && !particles.has_mlp())
    throw InputError(key_error("ntk.part", part, "the model has no MLP particles (model.mlp_particles = 0)"));
}

NtkSpectrum ntk_spectrum(MPI_Comm comm, Model &model, const std::string &part) {
  Particles &p = *model.particles;
  check_ntk_part(part, p);
  const TokenData &data = model.data;
  const long long N = data.N;
  const std::vector<Range> group = ranges(part, p);
  long long width = 0;
  for (const Range &r : group) width += r.end - r.begin;

  // J (N x width), each row scaled by sqrt(time scale): K = J J^T.
  std::vector<double> J(static_cast<size_t>(N * width)), X1(data.tokens.size()), a1(data.tokens.size()),
      dtheta(static_cast<size_t>(p.local_size()));
  for (long long i = 0; i < N; ++i) {
    model.solver->solve(data.tokens.data(), X1.data());
    model.readout->unit_cotangent(data, i, a1.data());
    model.solver->adjoint(a1.data(), nullptr, dtheta.data());
    double *row = J.data() + i * width;
    for (const Range &r : group) {
      const double w = std::sqrt(r.scale);
      for (long long k = r.begin; k < r.end; ++k) *row++ = w * dtheta[k];
    }
  }
  NtkSpectrum out;
  out.N = N;
  out.gram.assign(static_cast<size_t>(N * N), 0.0);
  if (width > 0) gemm(false, true, N, N, width, 1.0, J.data(), width, J.data(), width, 0.0, out.gram.data(), N);
  MPI_Allreduce(MPI_IN_PLACE, out.gram.data(), static_cast<int>(N * N), MPI_DOUBLE, MPI_SUM, comm);
  // Exactly symmetric (the sum above is, up to the order of additions).
  for (long long i = 0; i < N; ++i)
    for (long long j = 0; j < i; ++j) {
      const double s = 0.5 * (out.gram[i * N + j] + out.gram[j * N + i]);
      out.gram[i * N + j] = out.gram[j * N + i] = s;
    }
  out.eigenvalues = symmetric_eigenvalues(out.gram, N);
  return out;
}

} // namespace mft
