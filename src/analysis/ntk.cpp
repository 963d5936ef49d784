#include "mft/analysis/ntk.hpp"

#include "mft/core/blas.hpp"
#include "mft/core/error.hpp"
#include "mft/core/log_events.hpp"
#include "mft/core/linalg.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace mft {
namespace {

// Where the entries of group `part` (its ntk_part, or every matrix for
// `all`) lie in this rank's particles of one slice (DepthField::add_row's
// layout), with the square root of their species' time scale.
struct Range {
  long long begin, end;
  double weight;
};

std::vector<Range> slice_ranges(const std::string &part, const Particles &p) {
  std::vector<Range> out;
  long long at = 0;
  for (const ParticleSpecies *s : p.species())
    for (const ParticleMatrix &m : s->matrices()) {
      const long long size = s->own.count() * m.size();
      if (part == "all" || m.ntk_part == part) out.push_back({at, at + size, std::sqrt(s->time_scale())});
      at += size;
    }
  return out;
}

} // namespace

void check_ntk_part(const std::string &part, const Particles &particles) {
  if (part == "all") return;
  for (const ParticleSpecies *s : particles.registered())
    for (const ParticleMatrix &m : s->matrices())
      if (m.ntk_part == part) {
        if (s->M > 0) return;
        throw InputError(key_error("ntk.part", part, "the model has no " + s->name() + " (" + m.keys[1] + " = 0)"));
      }
  std::vector<std::string> parts = ntk_parts();
  parts.push_back("all");
  throw InputError(key_error("ntk.part", part, "must be one of " + comma_list(parts)));
}

NtkSpectrum ntk_spectrum(Problem &problem, const std::string &part) {
  return std::move(ntk_spectra(problem, {part}).front());
}

std::vector<NtkSpectrum> ntk_spectra(Problem &problem, const std::vector<std::string> &parts) {
  LogScope log(&LogEvents::ntk);
  Particles &p = *problem.particles;
  for (const std::string &part : parts) check_ntk_part(part, p);
  const TokenData &data = problem.data;
  // Rows (i, k): output k of sequence i.
  const long long d_out = data.d_out, N = data.N * d_out;
  std::vector<std::vector<Range>> groups;
  std::vector<long long> widths;
  for (const std::string &part : parts) {
    groups.push_back(slice_ranges(part, p));
    long long width = 0;
    for (const Range &r : groups.back()) width += r.end - r.begin;
    widths.push_back(width);
  }

  // One forward solve of this group's sequences and one adjoint sweep of
  // all d_out outputs of all of them at once (sequences do not mix, so each
  // sequence's parameter cotangent comes out apart: DepthSolver::adjoint_rows).
  // When the sweep leaves slice l, its rows J_l (N d_out x this rank's
  // entries of slice l, each scaled by the square root of its time scale)
  // are complete: gathered across groups, K += J_l J_l^T for every part
  // asked for. The Gram of MODEL.md §7 is the sum over slices (the particles
  // of different slices are different parameters), so no row of all the
  // parameters is ever held.
  const ProcessGrid &grid = *problem.grid;
  const TokenData mine = problem.block_of(data);
  DepthField &field = *problem.field;
  DepthSolver solver(field, problem.depth_config, true, d_out);
  const long long state = mine.N * data.n * data.d, rows = mine.N * d_out;
  std::vector<double> X1(static_cast<size_t>(state)), theta_l(static_cast<size_t>(field.slice_size()));
  std::vector<std::vector<double>> a1(static_cast<size_t>(d_out), std::vector<double>(static_cast<size_t>(state)));
  std::vector<std::vector<double>> J(parts.size());
  std::vector<NtkSpectrum> out(parts.size());
  for (size_t g = 0; g < parts.size(); ++g) {
    J[g].resize(static_cast<size_t>(rows * widths[g]));
    out[g].N = N;
    out[g].gram.assign(static_cast<size_t>(N * N), 0.0);
  }
  const std::function<void(long long)> slice_done = [&](long long l) {
    for (long long r = 0; r < rows; ++r) {
      std::fill(theta_l.begin(), theta_l.end(), 0.0);
      field.add_row(l, r, theta_l.data());
      for (size_t g = 0; g < parts.size(); ++g) {
        double *row = J[g].data() + r * widths[g];
        for (const Range &range : groups[g])
          for (long long q = range.begin; q < range.end; ++q) *row++ = range.weight * theta_l[static_cast<size_t>(q)];
      }
    }
    for (size_t g = 0; g < parts.size(); ++g) {
      const long long width = widths[g];
      if (width == 0) continue;
      if (grid.groups() == 1) {
        syrk_lower(N, width, 1.0, J[g].data(), width, 1.0, out[g].gram.data(), N);
        continue;
      }
      const std::vector<double> all = grid.gather_rows(J[g], data.N, d_out * width);
      syrk_lower(N, width, 1.0, all.data(), width, 1.0, out[g].gram.data(), N);
    }
  };
  // A group whose forward solve fails alone (tokens overflow) stops every
  // group before the sweep, whose slices gather across the groups.
  collectively(grid.world(), [&] { solver.solve(mine.tokens.data(), X1.data()); });
  collectively(grid.world(), [&] {
    TokenData one{1, data.n, data.d, d_out, std::vector<double>(static_cast<size_t>(data.n * data.d)),
                  std::vector<double>(static_cast<size_t>(d_out)), 0, {}, {}};
    std::vector<double> unit(one.tokens.size());
    for (long long k = 0; k < d_out; ++k)
      for (long long i = 0; i < mine.N; ++i) {
        std::copy_n(mine.sequence(i), data.n * data.d, one.tokens.data());
        problem.readout->unit_cotangent(one, 0, k, unit.data());
        std::copy(unit.begin(), unit.end(), a1[static_cast<size_t>(k)].begin() + i * data.n * data.d);
      }
    std::vector<const double *> cotangents;
    for (const std::vector<double> &a : a1) cotangents.push_back(a.data());
    solver.adjoint_rows(cotangents, slice_done);
  });
  // Sum over the heads of the group (every group holds the same rows), then
  // the upper triangle from the lower, so that K is exactly symmetric.
  for (NtkSpectrum &K : out) {
    MPI_Allreduce(MPI_IN_PLACE, K.gram.data(), static_cast<int>(N * N), MPI_DOUBLE, MPI_SUM, grid.heads());
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < i; ++j) K.gram[j * N + i] = K.gram[i * N + j];
    K.eigenvalues = symmetric_eigenvalues(K.gram, N);
  }
  return out;
}

NtkReport ntk_report(const NtkSpectrum &K_V, const NtkSpectrum &K_all, long long sequences) {
  NtkReport r;
  r.sequences = sequences;
  r.kv_lambda_min = K_V.lambda_min();
  r.kv_lambda_max = K_V.lambda_max();
  r.all_lambda_max = K_all.lambda_max();
  // A symmetric eigensolver's eigenvalues are exact to a modest multiple
  // of the rows times the unit roundoff times the largest one.
  r.tolerance = 100.0 * static_cast<double>(K_V.N) * std::numeric_limits<double>::epsilon() * std::fabs(r.kv_lambda_max);
  r.kv_positive_definite = r.kv_lambda_min > r.tolerance;
  const auto N = static_cast<double>(sequences);
  r.rate_bound = r.kv_positive_definite ? 2.0 * r.kv_lambda_min / N : 0.0;
  r.euler_dtau_max = r.all_lambda_max > 0 ? 2.0 * N / r.all_lambda_max : std::numeric_limits<double>::infinity();
  return r;
}

} // namespace mft
