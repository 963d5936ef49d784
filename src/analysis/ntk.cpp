#include "mft/analysis/ntk.hpp"

#include "mft/core/blas.hpp"
#include "mft/core/error.hpp"
#include "mft/core/log_events.hpp"
#include "mft/core/linalg.hpp"

#include <algorithm>
#include <cmath>

namespace mft {
namespace {

// [begin, end) of every particle matrix in group `part` (its ntk_part, or
// every matrix for `all`) in the flat layout, with its species' time scale.
struct Range {
  long long begin, end;
  double scale;
};

std::vector<Range> ranges(const std::string &part, const Particles &p) {
  std::vector<Range> out;
  long long at = 0;
  for (const ParticleSpecies *s : p.species())
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      const auto size = static_cast<long long>(s->values(k).size());
      if (part == "all" || s->matrices()[k].ntk_part == part) out.push_back({at, at + size, s->time_scale()});
      at += size;
    }
  return out;
}

} // namespace

void check_ntk_part(const std::string &part, const Particles &particles) {
  if (part != "V" && part != "QK" && part != "mlp" && part != "all")
    throw InputError(key_error("ntk.part", part, "must be one of V, QK, mlp, all"));
  if (part == "mlp" && !particles.has_mlp())
    throw InputError(key_error("ntk.part", part, "the model has no MLP particles (model.mlp_particles = 0)"));
}

NtkSpectrum ntk_spectrum(Problem &problem, const std::string &part) {
  LogScope log(&LogEvents::ntk);
  Particles &p = *problem.particles;
  check_ntk_part(part, p);
  const TokenData &data = problem.data;
  // Rows (i, k): output k of sequence i.
  const long long d_out = data.d_out, N = data.N * d_out;
  const std::vector<Range> group = ranges(part, p);
  long long width = 0;
  for (const Range &r : group) width += r.end - r.begin;

  // J (N x width), each row scaled by sqrt(time scale): K = J J^T. Output
  // i depends on sequence i alone: a forward and an adjoint solve of that
  // sequence per output (TSAdjointSolve consumes the trajectory), with a
  // solver for one sequence, so the cost is linear in N: d_out forward and
  // adjoint solves of the data. A group computes the rows of its block of
  // sequences; the rows are then gathered across groups.
  const ProcessGrid &grid = *problem.grid;
  const MPI_Comm comm = grid.heads();
  const SequenceBlock block = grid.block(data.N);
  DepthField field(comm, 1, data.n, p, problem.field_options);
  DepthSolver solver(field, problem.depth_config, true);
  TokenData one{1, data.n, data.d, d_out, std::vector<double>(static_cast<size_t>(data.n * data.d)),
                std::vector<double>(static_cast<size_t>(d_out))};
  std::vector<double> J(static_cast<size_t>(block.count() * d_out * width)), X1(one.tokens.size()),
      a1(one.tokens.size()), dtheta(static_cast<size_t>(p.local_size()));
  // A group whose solve fails alone stops every group before the gather.
  collectively(grid.world(), [&] {
    for (long long i = block.begin; i < block.end; ++i) {
      std::copy_n(data.sequence(i), data.n * data.d, one.tokens.data());
      for (long long k = 0; k < d_out; ++k) {
        solver.solve(one.tokens.data(), X1.data());
        problem.readout->unit_cotangent(one, 0, k, a1.data());
        solver.adjoint(a1.data(), nullptr, dtheta.data());
        double *row = J.data() + ((i - block.begin) * d_out + k) * width;
        for (const Range &r : group) {
          const double w = std::sqrt(r.scale);
          for (long long q = r.begin; q < r.end; ++q) *row++ = w * dtheta[q];
        }
      }
    }
  });
  J = grid.gather_rows(J, data.N, d_out * width);
  NtkSpectrum out;
  out.N = N;
  out.gram.assign(static_cast<size_t>(N * N), 0.0);
  if (width > 0) gemm(false, true, N, N, width, 1.0, J.data(), width, J.data(), width, 0.0, out.gram.data(), N);
  // Sum over the heads of the group (every group now holds the same J).
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
