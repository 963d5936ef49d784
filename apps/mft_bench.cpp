// mft-bench: times the velocity evaluation, a whole forward solve in depth,
// a whole training step (forward + adjoint + particle velocity), minibatch
// steps against the batch size b, the NTK and the attention kernel's phases
// on one core, beside the DGEMM rate of the same ranks measured in the same
// run. A
// benchmark, not a test: it prints seconds, GFLOP/s (flops of the forward
// counted as MODEL.md §3 counts them, Q x and K x apart), the fraction of the
// DGEMM rate, the step and NTK in units of forward solves and steps, and the
// peak RSS; --json prints the same as one JSON object. --sequence-groups
// runs on the 2-D grid; --comm times the all-reduce alone (comm_bench.hpp).
#include "mft/runs/command_line.hpp"
#include "mft/core/config.hpp"
#include "mft/core/error.hpp"
#include "mft/train/trainer.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/train/objective.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/core/blas.hpp"
#include "mft/core/blas_info.hpp"
#include "mft/model/score_map.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/model/kernel_phases.hpp"
#include "mft/core/rng.hpp"
#include "comm_bench.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
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

// Seconds of the fastest of the calls work(r), r = 0 .. count - 1, each with
// all ranks started together and timed by the slowest rank: the fastest,
// not the mean, so that a burst of another guest's load on a shared machine
// does not enter the ratios.
template <class Work> double timed(long long count, Work &&work) {
  double fastest = 1e300;
  for (long long r = 0; r < count; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    work(r);
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    fastest = std::min(fastest, slowest);
  }
  return fastest;
}

// Seconds of the fastest of 5 calls of work() on this rank alone.
template <class Work> double timed_here(Work &&work) {
  double best = 1e300;
  for (int r = 0; r < 5; ++r) {
    const double t0 = MPI_Wtime();
    work();
    best = std::min(best, MPI_Wtime() - t0);
  }
  return best;
}

// The DGEMM rate of these ranks: each rank multiplies 512 x 512 matrices
// with its single-threaded BLAS, all ranks at once, for about half a second;
// the sum of the ranks' rates in flop/s (the machine's rate on these cores).
double dgemm_rate(MPI_Comm comm) {
  const long long m = 512;
  std::vector<double> A(m * m, 1.0 / 3.0), B(m * m, 0.5), C(m * m, 0.0);
  mft::gemm(false, false, m, m, m, 1.0, A.data(), m, B.data(), m, 0.0, C.data(), m); // warm-up
  long long calls = 0;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  double t = 0;
  do {
    mft::gemm(false, false, m, m, m, 1.0, A.data(), m, B.data(), m, 1.0, C.data(), m);
    ++calls;
    t = MPI_Wtime() - t0;
  } while (t < 0.5);
  double rate = 2.0 * m * m * m * static_cast<double>(calls) / t, total = 0;
  MPI_Allreduce(&rate, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total;
}

struct Phase {
  const char *key, *label;
  double seconds, flops; // flops as MODEL.md §3 counts them (0: not counted)
};

// The forward solve and the training step of one problem, timed.
struct SolveAndStep {
  double solve = 0, step = 0;  // seconds, the fastest of their repeats
  double evals_per_solve = 0;  // field evaluations in a forward solve
  std::vector<double> theta;   // the particles after the timed steps
};

// A forward solve (fastest of `repeat`) and a training step (explicit
// Euler in tau, one forward and one adjoint; fastest of `steps`).
SolveAndStep time_solve_and_step(mft::Problem &problem, const mft::Config &config, long long repeat,
                                 long long steps) {
  const mft::TokenData data = problem.block_of(problem.data); // this sequence group's block
  std::vector<double> X1(data.tokens.size());
  SolveAndStep out;
  problem.solver->solve(data.tokens.data(), X1.data()); // warm-up
  const long long before = problem.field->evaluations();
  out.solve = timed(repeat, [&](long long) { problem.solver->solve(data.tokens.data(), X1.data()); });
  out.evals_per_solve = static_cast<double>(problem.field->evaluations() - before) / static_cast<double>(repeat);
  mft::Trainer trainer(problem, config);
  out.theta.resize(static_cast<size_t>(trainer.gradient().local_size()));
  problem.particles->pack(out.theta.data());
  // Warm-up: the first step reuses the velocity kept from this call, so it
  // stays out of the timing; every timed step then solves forward and adjoint.
  trainer.gradient().velocity(0, out.theta.data());
  trainer.run(out.theta.data(), 0, 1);
  const long long before_steps = problem.field->evaluations();
  out.step = timed(steps, [&](long long r) { trainer.run(out.theta.data(), 1 + r, 2 + r); });
  const double solves_per_step = static_cast<double>(problem.field->evaluations() - before_steps) /
                                 (out.evals_per_solve * static_cast<double>(steps));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && std::abs(solves_per_step - 1.0) > 1e-9)
    std::fprintf(stderr, "mft-bench: warning: a timed training step made %.3f forward solves, not 1\n",
                 solves_per_step);
  return out;
}

struct Summary {
  std::string title;
  int ranks;
  double dgemm, step_over_forward, ntk_over_step, rss_mib, trajectory_mib;
  double step_seconds;                              // the full-data training step
  std::vector<std::pair<long long, double>> batches; // (b, seconds of an sgd step on b sequences)
  std::vector<mft::KernelPhase> kernel;             // one core's phases
  long long kernel_heads = 0;
  long long sequences = 0; // N
  // The same solve and step with run.precision = mixed (0: not timed).
  double mixed_solve = 0, mixed_step = 0;
};

// A kernel phase's rate, GFLOP/s, and its fraction of one rank's DGEMM.
double phase_gflops(const mft::KernelPhase &k) { return k.flops / k.ns_per_query; }
double phase_of_dgemm(const Summary &s, const mft::KernelPhase &k) {
  return phase_gflops(k) * 1e9 / (s.dgemm / s.ranks);
}

void print_table(const Summary &s, const std::vector<Phase> &phases, bool ntk, double evals_per_solve,
                 long long train_steps) {
  std::printf("mft-bench: %s\n", s.title.c_str());
  std::printf("DGEMM (512^3, one BLAS thread per rank, all ranks at once): %.2f GFLOP/s on %d rank%s, %s\n",
              s.dgemm * 1e-9, s.ranks, s.ranks == 1 ? "" : "s", mft::blas_summary().c_str());
  for (const Phase &p : phases) {
    if (!ntk && std::string(p.key) == "ntk") continue;
    std::printf("%-22s %10.6f s", (std::string(p.label) + ":").c_str(), p.seconds);
    if (p.flops > 0)
      std::printf("  %8.3f GFLOP  %7.2f GFLOP/s  %5.1f %% of DGEMM", p.flops * 1e-9, p.flops / p.seconds * 1e-9,
                  100 * p.flops / p.seconds / s.dgemm);
    std::printf("\n");
  }
  std::printf("forward solve: %.0f evaluations; training step (forward + adjoint + update, Euler in tau, fastest "
              "of %lld) = %.2f forward solves",
              evals_per_solve, train_steps, s.step_over_forward);
  if (ntk) std::printf("; NTK = %.2f training steps", s.ntk_over_step);
  if (s.mixed_step > 0)
    std::printf("\nrun.precision = mixed: forward solve %.6f s (%.2fx faster), training step %.6f s (%.2fx faster)",
                s.mixed_solve, s.step_seconds / s.step_over_forward / s.mixed_solve, s.mixed_step,
                s.step_seconds / s.mixed_step);
  std::printf("\ndepth trajectory %.1f MiB per rank (stages, and checkpoints); peak RSS %.1f MiB per rank\n",
              s.trajectory_mib, s.rss_mib);
  if (!s.batches.empty()) {
    std::printf("minibatch steps (sgd, train.batch b; the full step takes %.6f s):\n", s.step_seconds);
    for (const auto &[b, t] : s.batches)
      std::printf("  b = %-6lld %10.6f s  %6.3f of the full step (b/N = %.3f)\n", b, t, t / s.step_seconds,
                  static_cast<double>(b) / static_cast<double>(s.sequences));
  }
  if (!s.kernel.empty()) {
    std::printf("kernel phases, one core, per query token (%lld heads; DGEMM %.2f GFLOP/s per rank):\n",
                s.kernel_heads, s.dgemm / s.ranks * 1e-9);
    for (const mft::KernelPhase &k : s.kernel) {
      std::printf("  %-18s %9.1f ns%s", k.name.c_str(), k.ns_per_query,
                  k.name.find("normal") != std::string::npos ? " per normal" : "");
      if (k.flops > 0)
        std::printf("  %7.2f GFLOP/s  %5.1f %% of DGEMM", phase_gflops(k), 100 * phase_of_dgemm(s, k));
      if (k.ns_per_score > 0) std::printf("  %6.3f ns per score", k.ns_per_score);
      std::printf("\n");
    }
  }
}

void print_json(const Summary &s, const std::vector<Phase> &phases, bool ntk) {
  std::printf("{\"benchmark\": \"%s\", \"ranks\": %d, \"blas_core\": \"%s\", \"dgemm_gflops\": %.6g, "
              "\"phases\": {",
              s.title.c_str(), s.ranks, mft::blas_info().core.c_str(), s.dgemm * 1e-9);
  bool first = true;
  for (const Phase &p : phases) {
    if (!ntk && std::string(p.key) == "ntk") continue;
    std::printf("%s\"%s\": {\"seconds\": %.6g", first ? "" : ", ", p.key, p.seconds);
    if (p.flops > 0)
      std::printf(", \"gflop\": %.6g, \"gflops\": %.6g, \"dgemm_fraction\": %.6g", p.flops * 1e-9,
                  p.flops / p.seconds * 1e-9, p.flops / p.seconds / s.dgemm);
    std::printf("}");
    first = false;
  }
  std::printf("}, \"step_over_forward\": %.6g", s.step_over_forward);
  if (ntk) std::printf(", \"ntk_over_step\": %.6g", s.ntk_over_step);
  if (s.mixed_step > 0)
    std::printf(", \"mixed\": {\"forward_solve\": %.6g, \"training_step\": %.6g, \"forward_speedup\": %.6g, "
                "\"step_speedup\": %.6g}",
                s.mixed_solve, s.mixed_step, s.step_seconds / s.step_over_forward / s.mixed_solve,
                s.step_seconds / s.mixed_step);
  std::printf(", \"peak_rss_mib\": %.6g, \"trajectory_mib\": %.6g", s.rss_mib, s.trajectory_mib);
  std::printf(", \"minibatch_steps\": [");
  for (size_t i = 0; i < s.batches.size(); ++i)
    std::printf("%s{\"batch\": %lld, \"seconds\": %.6g, \"of_full_step\": %.6g}", i ? ", " : "",
                s.batches[i].first, s.batches[i].second, s.batches[i].second / s.step_seconds);
  std::printf("], \"kernel_phases\": {");
  for (size_t i = 0; i < s.kernel.size(); ++i) {
    const mft::KernelPhase &k = s.kernel[i];
    std::printf("%s\"%s\": {\"ns_per_query\": %.6g", i ? ", " : "", k.name.c_str(), k.ns_per_query);
    if (k.flops > 0)
      std::printf(", \"gflops\": %.6g, \"dgemm_fraction\": %.6g", phase_gflops(k), phase_of_dgemm(s, k));
    if (k.ns_per_score > 0) std::printf(", \"ns_per_score\": %.6g", k.ns_per_score);
    std::printf("}");
  }
  std::printf("}}\n");
}

} // namespace

int main(int argc, char **argv) {
  const mft::SplitArguments split = mft::split_arguments(argc, argv);
  mft::PetscSession session(&argc, &argv, split.petsc);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long long N, n, d, dh, M, L, k, repeat, train_steps, groups;
  std::string rk, attention, causal, task;
  po::options_description desc("mft-bench options (defaults: the reference size; any configuration key may "
                               "follow as --KEY VALUE, e.g. --init.sigma_v 0.3)");
  desc.add_options()("help", "this help")                                      //
      ("N", po::value(&N)->default_value(256), "sequences")                    //
      ("n", po::value(&n)->default_value(16), "tokens per sequence")           //
      ("d", po::value(&d)->default_value(8), "token dimension")                //
      ("dh", po::value(&dh)->default_value(8), "head dimension")               //
      ("M", po::value(&M)->default_value(64), "heads per slice")               //
      ("L", po::value(&L)->default_value(16), "slices")                        //
      ("k", po::value(&k)->default_value(1), "steps per slice")                //
      ("rk", po::value(&rk)->default_value("4"), "PETSc RK tableau in depth")  //
      ("attention", po::value(&attention)->default_value("softmax"),
       ("score map: " + mft::comma_list(mft::score_map_names())).c_str()) //
      ("causal", po::value(&causal)->default_value("false"), "causal mask: true, false (task markov: true)") //
      ("task", po::value(&task)->default_value("gaussian"),
       "data: gaussian (one output per sequence), or markov (next-token prediction on in-context chains of 3 "
       "symbols, d = 20 unless given: the causal step of sequence modelling)") //
      ("repeat", po::value(&repeat)->default_value(5), "timed forward solves (the fastest counts)") //
      ("train-steps", po::value(&train_steps)->default_value(3), "timed training steps (Euler; the fastest counts)") //
      ("sequence-groups", po::value(&groups)->default_value(1), "parallel.sequence_groups P_s") //
      ("no-ntk", "skip the NTK phase")                                         //
      ("no-batches", "skip the minibatch steps (sgd, train.batch N/2 ... N/32)")  //
      ("no-kernel", "skip the kernel phases (one core, per query token)")      //
      ("no-mixed", "skip the forward solve and training step in run.precision = mixed") //
      ("comm", "time MPI_Allreduce from 8 B to 32 MiB and fit alpha + beta m, nothing else") //
      ("json", "print one JSON object instead of the table");
  po::variables_map vm;
  std::vector<std::string> keys; // any configuration key beside them: --KEY VALUE
  try {
    const po::parsed_options parsed = po::command_line_parser(split.mft).options(desc).allow_unregistered().run();
    po::store(parsed, vm);
    po::notify(vm);
    keys = po::collect_unrecognized(parsed.options, po::include_positional);
  } catch (const po::error &e) {
    if (rank == 0) std::cerr << "mft-bench: error: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    if (rank == 0) std::cout << desc;
    return 0;
  }
  const bool json = vm.count("json") > 0, ntk = vm.count("no-ntk") == 0;
  if (vm.count("comm")) return mft::bench::run_comm_bench(MPI_COMM_WORLD, json);

  if (task != "gaussian" && task != "markov") {
    if (rank == 0) std::cerr << "mft-bench: error: --task = " << task << ": must be gaussian or markov\n";
    return 2;
  }
  const bool markov = task == "markov";
  // Sequence modelling: every position predicts, under the causal mask;
  // the tokens embed 3 symbols and 16 positional coordinates.
  if (markov && vm["causal"].defaulted()) causal = "true";
  if (markov && vm["d"].defaulted()) d = 20;
  try {
    std::vector<std::string> args = {
        "--model.d", std::to_string(d), "--model.head_dim", std::to_string(dh), "--model.heads",
        std::to_string(M), "--model.slices", std::to_string(L), "--depth.rk_type", rk,
        "--depth.steps_per_slice", std::to_string(k), "--data.task", task,
        "--data.sequences", std::to_string(N), "--data.tokens", std::to_string(n),
        "--model.attention", attention, "--model.causal", causal,
        "--parallel.sequence_groups", std::to_string(groups)};
    for (const std::string &key : keys)
      if (std::find(args.begin(), args.end(), key) != args.end())
        throw mft::InputError(key + " is set by mft-bench's own option (see --help)");
    if (markov)
      for (const char *key : {"--readout.kind", "next-token", "--loss.kind", "cross-entropy"}) args.push_back(key);
    args.insert(args.end(), keys.begin(), keys.end());
    mft::Config config = mft::parse_config(args);
    // Unbounded weights grow like |x|^3 in depth: scores smaller than the
    // default scale's keep the flow finite, unless the scale is given.
    if (!mft::make_score_map(attention, false)->bounded() && config.init.sigma_qk == mft::kScaledWithSizes) {
      mft::resolve_initial_scales(config);
      config.init.sigma_qk *= 0.4;
    }
    mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
    // This sequence group's block of the data (all of it on one group).
    const mft::TokenData data = problem.block_of(problem.data);
    std::vector<double> F(data.tokens.size());
    const double dgemm = dgemm_rate(MPI_COMM_WORLD);

    // Velocity evaluation: one slice's F_l(X), all-reduce included.
    problem.field->evaluate(0, data.tokens.data(), F.data()); // warm-up
    const long long evals = 20 * repeat;
    const double t_eval = timed(evals, [&](long long r) { problem.field->evaluate(r % L, data.tokens.data(), F.data()); });

    // A forward solve and a training step (and, last, the same in mixed precision).
    const SolveAndStep timing = time_solve_and_step(problem, config, repeat, train_steps);
    const double t_solve = timing.solve, t_step = timing.step, evals_per_solve = timing.evals_per_solve;
    const std::vector<double> &theta = timing.theta;

    // Minibatch steps (sgd, train.batch b) against b: the step's cost should
    // fall with b, the full data's history row being the monitor's, not the step's.
    std::vector<std::pair<long long, double>> batches;
    if (vm.count("no-batches") == 0)
      for (long long b = N / 2; b >= std::max<long long>(1, N / 32); b /= 2) {
        mft::Config batch_config = config;
        batch_config.train.method = "sgd";
        batch_config.train.batch = b;
        mft::Trainer batch_trainer(problem, batch_config);
        std::vector<double> batch_theta(theta);
        batch_trainer.gradient().velocity(0, batch_theta.data());
        batch_trainer.run(batch_theta.data(), 0, 1);
        const double t_b = timed(train_steps, [&](long long r) { batch_trainer.run(batch_theta.data(), 1 + r, 2 + r); });
        batches.emplace_back(b, t_b);
      }

    // The NTK of every parameter (one forward solve and one adjoint sweep).
    const double t_ntk = ntk ? timed(1, [&](long long) { mft::ntk_spectrum(problem, "all"); }) : 0.0;
    // The kernel's phases on rank 0 alone, the others waiting: one core.
    const long long kernel_heads = (M + problem.grid->head_ranks() - 1) / problem.grid->head_ranks();
    std::vector<mft::KernelPhase> kernel;
    if (rank == 0 && vm.count("no-kernel") == 0) {
      kernel = mft::time_attention_phases(n, d, kernel_heads, attention);
      // Langevin's noise: the bulk generator against the scalar one, per normal.
      std::vector<double> xi(1 << 20);
      const double bulk = timed_here([&] { mft::NormalStream(1, mft::Species::Heads, 0, 0, 0).fill(xi.data(), 1 << 20); });
      mft::RandomStream scalar(1, mft::Species::Heads, 0, 0, 0);
      const double one = timed_here([&] { for (double &x : xi) x = scalar.normal(); });
      kernel.push_back({"langevin_normal", bulk * 1e9 / (1 << 20), 0.0, 0.0});
      kernel.push_back({"scalar_normal", one * 1e9 / (1 << 20), 0.0, 0.0});
    }
    MPI_Barrier(MPI_COMM_WORLD);
    // Every group's flops: each field counts its group's block of sequences.
    double f_eval = problem.field->model_flops();
    problem.grid->sum_across(&f_eval, 1);
    double rss = max_rss_mib(), rss_max = 0;
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    // The solve and step again with run.precision = mixed: its own problem
    // (the same particles, the kernels in float), after the peak RSS was read.
    // The same checkpoint plan as the double run's (planned again with the
    // double problem still held, it might differ); a mixed problem that does
    // not fit beside it is skipped with a warning, not the double results.
    SolveAndStep mixed;
    if (vm.count("no-mixed") == 0 && config.run.precision == "double") {
      mft::Config mixed_config = config;
      mixed_config.run.precision = "mixed";
      mixed_config.depth.checkpoint_slices = problem.depth_config.checkpoint_slices;
      try {
        mft::Problem mixed_problem = mft::build_problem(MPI_COMM_WORLD, mixed_config, true);
        mixed = time_solve_and_step(mixed_problem, mixed_config, repeat, train_steps);
      } catch (const mft::InputError &e) {
        if (rank == 0) std::fprintf(stderr, "mft-bench: warning: run.precision mixed not timed: %s\n", e.what());
      }
    }

    if (rank == 0) {
      const double f_solve = f_eval * evals_per_solve;
      const std::vector<Phase> phases = {
          {"velocity_evaluation", "velocity evaluation", t_eval, f_eval},
          {"forward_solve", "forward solve", t_solve, f_solve},
          {"training_step", "training step", t_step, 0.0},
          {"ntk", "NTK (all parameters)", t_ntk, 0.0}};
      char title[256];
      std::snprintf(title, sizeof title, "N=%lld n=%lld d=%lld d_h=%lld M=%lld L=%lld, RK %s, k=%lld, %s%s%s, %s",
                    N, n, d, dh, M, L, rk.c_str(), k, attention.c_str(), causal == "true" ? " causal" : "",
                    markov ? ", task markov (next-token)" : "",
                    mft::describe_grid(*problem.grid).c_str());
      Summary summary{title, size, dgemm, t_step / t_solve, ntk ? t_ntk / t_step : 0.0, rss_max,
                      problem.solver->trajectory_bytes() / 1048576.0, t_step, batches, kernel, kernel_heads, N,
                      mixed.solve, mixed.step};
      if (json)
        print_json(summary, phases, ntk);
      else
        print_table(summary, phases, ntk, evals_per_solve, train_steps);
    }
  } catch (const mft::InputError &e) { // a bad option: exit 2, as mft's
    if (rank == 0) std::cerr << "mft-bench: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception &e) {
    if (rank == 0) std::cerr << "mft-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
