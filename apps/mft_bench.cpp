// mft-bench: times the velocity evaluation, a whole forward solve in depth,
// and a whole training step (forward + adjoint + particle velocity). A
// benchmark, not a test: it prints seconds and GFLOP/s (flops of the forward
// counted as MODEL.md §3 counts them, Q x and K x apart).
#include "mft/runs/command_line.hpp"
#include "mft/core/config.hpp"
#include "mft/core/error.hpp"
#include "mft/train/trainer.hpp"
#include "mft/runs/build_model.hpp"
#include "mft/train/objective.hpp"
#include "mft/core/petsc_session.hpp"

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <sys/resource.h>
#include <vector>

namespace po = boost::program_options;

namespace {

double max_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

} // namespace

int main(int argc, char **argv) {
  const mft::SplitArguments split = mft::split_arguments(argc, argv);
  mft::PetscSession session(&argc, &argv, split.petsc);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long long N, n, d, dh, M, L, k, repeat, train_steps;
  std::string rk, attention, causal;
  po::options_description desc("mft-bench options (defaults: the reference size)");
  desc.add_options()("help", "this help")                                      //
      ("N", po::value(&N)->default_value(256), "sequences")                    //
      ("n", po::value(&n)->default_value(16), "tokens per sequence")           //
      ("d", po::value(&d)->default_value(8), "token dimension")                //
      ("dh", po::value(&dh)->default_value(8), "head dimension")               //
      ("M", po::value(&M)->default_value(64), "heads per slice")               //
      ("L", po::value(&L)->default_value(16), "slices")                        //
      ("k", po::value(&k)->default_value(1), "steps per slice")                //
      ("rk", po::value(&rk)->default_value("4"), "PETSc RK tableau in depth")  //
      ("attention", po::value(&attention)->default_value("softmax"), "score map: softmax, relu") //
      ("causal", po::value(&causal)->default_value("false"), "causal mask: true, false")         //
      ("repeat", po::value(&repeat)->default_value(5), "timed forward solves") //
      ("train-steps", po::value(&train_steps)->default_value(3), "timed training steps (Euler)");
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
    mft::Config config = mft::parse_config(
        {"--model.d", std::to_string(d), "--model.head_dim", std::to_string(dh), "--model.heads",
         std::to_string(M), "--model.slices", std::to_string(L), "--depth.rk_type", rk,
         "--depth.steps_per_slice", std::to_string(k), "--data.task", "gaussian",
         "--data.sequences", std::to_string(N), "--data.tokens", std::to_string(n),
         "--model.attention", attention, "--model.causal", causal,
         // relu attention grows like |x|^3 in depth: scores small enough to stay finite
         "--init.sigma_qk", attention == "relu" ? "0.2" : "0.5"});
    mft::Model model = mft::build_model(MPI_COMM_WORLD, config, true);
    const mft::TokenData &data = model.data;
    std::vector<double> F(data.tokens.size()), X1(data.tokens.size());

    // Velocity evaluation: one slice's F_l(X), all-reduce included.
    model.field->evaluate(0, data.tokens.data(), F.data()); // warm-up
    const long long evals = 20 * repeat;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long long r = 0; r < evals; ++r) model.field->evaluate(r % L, data.tokens.data(), F.data());
    const double t_eval = (MPI_Wtime() - t0) / static_cast<double>(evals);

    model.solver->solve(data.tokens.data(), X1.data()); // warm-up
    const long long before = model.field->evaluations();
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long long r = 0; r < repeat; ++r) model.solver->solve(data.tokens.data(), X1.data());
    const double t_solve = (MPI_Wtime() - t0) / static_cast<double>(repeat);
    const double evals_per_solve =
        static_cast<double>(model.field->evaluations() - before) / static_cast<double>(repeat);

    // Training steps: explicit Euler in tau, one forward and one adjoint each.
    mft::Trainer trainer(MPI_COMM_WORLD, model, config);
    std::vector<double> theta(static_cast<size_t>(trainer.gradient().local_size()));
    model.particles->pack(theta.data());
    trainer.gradient().velocity(0, theta.data()); // warm-up, and the cached first state
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    trainer.run(theta.data(), 0, train_steps);
    const double t_step = (MPI_Wtime() - t0) / static_cast<double>(train_steps);
    double rss = max_rss_mib(), rss_max = 0;
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (rank == 0) {
      const double f_eval = model.field->model_flops();
      const double f_solve = f_eval * evals_per_solve;
      std::printf("mft-bench: N=%lld n=%lld d=%lld d_h=%lld M=%lld L=%lld, RK %s, k=%lld, %s%s, %d ranks\n",
                  N, n, d, dh, M, L, rk.c_str(), k, attention.c_str(), causal == "true" ? " causal" : "",
                  size);
      std::printf("velocity evaluation: %.6f s  %.3f GFLOP  %.2f GFLOP/s\n", t_eval, f_eval * 1e-9,
                  f_eval / t_eval * 1e-9);
      std::printf("forward solve:       %.6f s  %.3f GFLOP  %.2f GFLOP/s  (%.0f evaluations)\n",
                  t_solve, f_solve * 1e-9, f_solve / t_solve * 1e-9, evals_per_solve);
      std::printf("training step:       %.6f s  (forward + adjoint, Euler in tau, %lld steps timed)\n",
                  t_step, train_steps);
      std::printf("depth trajectory:    %.1f MiB per rank (states and stages); peak RSS %.1f MiB per rank\n",
                  model.solver->trajectory_bytes() / 1048576.0, rss_max);
    }
  } catch (const std::exception &e) {
    if (rank == 0) std::cerr << "mft-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
