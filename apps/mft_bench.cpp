// mft-bench: times the velocity evaluation and a whole forward solve in depth.
// A benchmark, not a test: it prints seconds and GFLOP/s (flops counted as
// MODEL.md §3 counts them, Q x and K x apart).
#include "mft/data.hpp"
#include "mft/depth.hpp"
#include "mft/field.hpp"
#include "mft/particles.hpp"
#include "mft/petsc_session.hpp"

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <vector>

namespace po = boost::program_options;

int main(int argc, char **argv) {
  const mft::SplitArguments split = mft::split_arguments(argc, argv);
  mft::PetscSession session(&argc, &argv, split.petsc);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long long N, n, d, dh, M, L, k, repeat;
  std::string rk;
  po::options_description desc("mft-bench options (defaults: the reference size)");
  desc.add_options()("help", "this help")                                      //
      ("N", po::value(&N)->default_value(256), "sequences")                    //
      ("n", po::value(&n)->default_value(16), "tokens per sequence")           //
      ("d", po::value(&d)->default_value(8), "token dimension")                //
      ("dh", po::value(&dh)->default_value(8), "head dimension")               //
      ("M", po::value(&M)->default_value(64), "heads per slice")               //
      ("L", po::value(&L)->default_value(16), "slices")                        //
      ("k", po::value(&k)->default_value(1), "steps per slice")                //
      ("rk", po::value(&rk)->default_value("4"), "PETSc RK tableau")           //
      ("repeat", po::value(&repeat)->default_value(5), "timed repetitions");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(split.mft).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error &e) {
    if (rank == 0) std::cerr << "mft-bench: error: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    if (rank == 0) std::cout << desc;
    return 0;
  }

  try {
    const mft::TokenData data = mft::make_gaussian(N, n, d, 2);
    mft::Particles particles{mft::HeadParticles(L, M, dh, d, mft::HeadOwnership::block(M, rank, size)),
                             {}};
    particles.heads.initialise(1, 0.5, 1.0);
    mft::DepthField field(MPI_COMM_WORLD, N, n, particles);
    mft::DepthConfig depth;
    depth.ts_type = "rk";
    depth.rk_type = rk;
    depth.steps_per_slice = k;
    mft::DepthSolver solver(field, depth);
    std::vector<double> F(data.tokens.size()), X1(data.tokens.size());

    // Velocity evaluation: one slice's F_l(X), all-reduce included.
    field.evaluate(0, data.tokens.data(), F.data()); // warm-up
    const long long evals = 20 * repeat;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long long r = 0; r < evals; ++r) field.evaluate(r % L, data.tokens.data(), F.data());
    const double t_eval = (MPI_Wtime() - t0) / static_cast<double>(evals);

    solver.solve(data.tokens.data(), X1.data()); // warm-up
    const long long before = field.evaluations();
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long long r = 0; r < repeat; ++r) solver.solve(data.tokens.data(), X1.data());
    const double t_solve = (MPI_Wtime() - t0) / static_cast<double>(repeat);
    const double evals_per_solve =
        static_cast<double>(field.evaluations() - before) / static_cast<double>(repeat);

    if (rank == 0) {
      const double f_eval = field.model_flops();
      const double f_solve = f_eval * evals_per_solve;
      std::printf("mft-bench: N=%lld n=%lld d=%lld d_h=%lld M=%lld L=%lld, RK %s, k=%lld, %d ranks\n",
                  N, n, d, dh, M, L, rk.c_str(), k, size);
      std::printf("velocity evaluation: %.6f s  %.3f GFLOP  %.2f GFLOP/s\n", t_eval, f_eval * 1e-9,
                  f_eval / t_eval * 1e-9);
      std::printf("forward solve:       %.6f s  %.3f GFLOP  %.2f GFLOP/s  (%.0f evaluations)\n",
                  t_solve, f_solve * 1e-9, f_solve / t_solve * 1e-9, evals_per_solve);
    }
  } catch (const std::exception &e) {
    if (rank == 0) std::cerr << "mft-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
