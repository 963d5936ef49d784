// Uses the installed library the way a research code would: its own main,
// mft's configuration, a forward solve and the gradient of the risk.
#include <mft/mft.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char **argv) {
  const mft::SplitArguments split = mft::split_arguments(argc, argv);
  mft::PetscSession session(&argc, &argv, split.petsc);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    mft::Config config = mft::parse_config({"--model.heads", "4", "--model.slices", "2",
                                            "--data.sequences", "6", "--data.tokens", "5"});
    mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
    mft::Objective objective(problem);
    std::vector<double> theta(static_cast<size_t>(objective.local_size()));
    problem.particles->pack(theta.data());
    const mft::Gradient &g = objective.at(theta.data());
    double norm = 0.0;
    for (double v : g.dR) norm += v * v;
    if (rank == 0) std::printf("mft %s: R = %.12g, |dR| = %.6g\n", mft::kVersion, g.risk, std::sqrt(norm));
    return std::isfinite(g.risk) && g.risk > 0 && norm > 0 ? 0 : 1;
  } catch (const mft::Error &e) {
    if (rank == 0) std::fprintf(stderr, "consumer: %s\n", e.what());
    return e.exit_code();
  }
}
