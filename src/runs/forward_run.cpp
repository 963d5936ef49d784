#include "mft/runs/forward_run.hpp"

#include "mft/analysis/slice_attention.hpp"
#include "mft/core/error.hpp"
#include "mft/model/heads.hpp"
#include "mft/model/neurons.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/from_run.hpp"
#include "mft/train/objective.hpp"
#include "mft/core/signals.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

namespace mft {
namespace {

// The run header: sizes, integrator, grid, model, memory and where the
// particles come from.
std::string forward_header(const Config &config, const Problem &problem, const MemoryEstimate &memory,
                           const FromRun &from, int rank) {
  const TokenData &data = problem.data;
  std::ostringstream header;
  char line[512];
  std::snprintf(line, sizeof line,
                "mft forward: N=%lld n=%lld d=%lld | %s | "
                "depth TS %s %s, %lld steps | %s\n",
                data.N, data.n, data.d, problem.particles->describe().c_str(), config.depth.ts_type.c_str(),
                config.depth.rk_type.c_str(), problem.solver->steps(), describe_grid(*problem.grid).c_str());
  header << line << "model: " << describe_variant(config, problem) << "\n"
         << "memory: " << memory.summary() << "\n";
  header << particle_source(config, from) << "\n";
  if (rank == 0 && !from)
    if (const std::string note = init_file_differences(config, "forward"); !note.empty()) header << note << "\n";
  return header.str();
}

// What a forward solve measures beside ForwardResult.
struct ForwardMeasures {
  double train_accuracy = std::nan(""); // with a classifier's loss
  Measure test;                         // with held-out data
  bool held_out = false;
};

// The solve of this group's block: X(1), the tokens through depth (as
// written: block x (K + 1) x n x d), the token norm's drift, the
// predictions of all N and the risk; the held-out measures.
ForwardResult solve_forward(MPI_Comm comm, const Config &config, Problem &problem, ForwardMeasures &measures) {
  const TokenData &data = problem.data;
  ForwardResult result;
  const TokenData block = problem.block_of(data);
  result.tokens_final.resize(block.tokens.size());
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  std::vector<double> mine;
  // The tokens through depth: the slice boundaries (every k steps) or every step.
  DepthPath path;
  path.every = config.forward.every_step ? 1 : config.depth.steps_per_slice;
  const bool record = config.forward.tokens_depth;
  collectively(comm, [&] { // a group that diverges alone stops every group
    problem.solver->solve(block.tokens.data(), result.tokens_final.data(), record ? &path : nullptr);
    mine = problem.readout->predict(block, result.tokens_final.data());
  });
  result.seconds = MPI_Wtime() - t0;
  if (record) {
    // (K + 1, block, n, d) as recorded to (block, K + 1, n, d) as written.
    const auto rows = static_cast<long long>(path.depths.size()), per = block.n * block.d;
    result.depths = path.depths;
    result.tokens_depth.resize(path.states.size());
    for (long long r = 0; r < rows; ++r)
      for (long long i = 0; i < block.N; ++i)
        std::copy_n(path.states.data() + (r * block.N + i) * per, per,
                    result.tokens_depth.data() + (i * rows + r) * per);
  }
  // How far the tokens ended from the token norm's constraint (all groups).
  const TokenNorm &norm = problem.field->norm();
  if (!norm.identity()) {
    result.drift = record ? norm.drift(path.states.data(), static_cast<long long>(path.depths.size()) * block.N *
                                                                block.n, block.d)
                          : norm.drift(result.tokens_final.data(), block.N * block.n, block.d);
    MPI_Allreduce(MPI_IN_PLACE, &result.drift, 1, MPI_DOUBLE, MPI_MAX, comm);
  }
  result.predictions = problem.grid->gather_rows(mine, data.N, data.d_out);
  result.risk = problem.risk_of(result.predictions, data);
  if (problem.loss->classifies()) measures.train_accuracy = problem.accuracy_of(result.predictions, data);
  measures.held_out = problem.test_solver != nullptr;
  if (measures.held_out) measures.test = measure(problem, *problem.test_solver, problem.test_data);
  return result;
}

void print_forward(std::ostream &out, const Config &config, const Problem &problem, const ForwardResult &result,
                   const ForwardMeasures &measures) {
  char line[256];
  std::snprintf(line, sizeof line, "risk = %.17g\n", result.risk);
  out << line;
  const bool classifies = problem.loss->classifies();
  if (classifies) {
    std::snprintf(line, sizeof line, "accuracy = %.6f\n", measures.train_accuracy);
    out << line;
  }
  if (measures.held_out) {
    std::snprintf(line, sizeof line, "test risk = %.17g (%lld held-out sequences)\n", measures.test.risk,
                  problem.test_data.N);
    out << line;
    for (const Baseline &b : problem.baselines)
      if (b.reference) {
        std::snprintf(line, sizeof line, "baseline: %s %.6e (%s), test risk / baseline = %.6f\n", b.name.c_str(),
                      b.nats, b.meaning.c_str(), measures.test.risk / b.nats);
        out << line;
      }
    if (classifies) {
      std::snprintf(line, sizeof line, "test accuracy = %.6f\n", measures.test.accuracy);
      out << line;
    }
  }
  if (!problem.field->norm().identity()) {
    std::snprintf(line, sizeof line, "model.norm %s: the tokens' largest drift from it %s: %.3e\n",
                  config.model.norm.c_str(), config.forward.tokens_depth ? "along depth" : "at s = 1",
                  result.drift);
    out << line;
  }
  std::snprintf(line, sizeof line, "depth solve: %.3f s, %lld velocity evaluations\n", result.seconds,
                problem.field->evaluations());
  out << line << std::flush;
}

// Each slice's head-averaged attention on the first `count` sequences of
// `set` (a solver of their own for this group's block of them).
RunFile::ForwardAttention attention_of(Problem &problem, const TokenData &set, const std::string &name,
                                       long long count) {
  RunFile::ForwardAttention out{name, {}, std::min(count, set.N), problem.particles->slices(), set.n};
  const TokenData first = set.rows(0, out.count);
  DepthField field(problem.heads_comm(), problem.grid->block(first.N).count(), first.n, *problem.particles,
                   problem.field_options);
  DepthSolver solver(field, problem.depth_config, false);
  out.values = slice_attention(problem, solver, first);
  return out;
}

// Olsson et al.'s ablation: the risks with the velocity of the slices of
// ablate.slices set to zero (V of their heads and W2 of their neurons: the
// field is linear in both), the particles restored after.
RunFile::Ablation ablate(const Config &config, Problem &problem) {
  RunFile::Ablation out{config.ablate.slices, 0.0, std::nan("")};
  Particles &particles = *problem.particles;
  std::vector<double> kept(static_cast<size_t>(particles.local_size()));
  particles.pack(kept.data());
  HeadParticles &heads = particles.get<HeadParticles>();
  NeuronParticles &neurons = particles.get<NeuronParticles>();
  for (const long long l : config.ablated_slices()) {
    for (long long m = 0; m < heads.own.count(); ++m) std::fill_n(heads.v(l, m), heads.v_size(), 0.0);
    for (long long m = 0; m < neurons.own.count(); ++m) std::fill_n(neurons.w2(l, m), neurons.d * neurons.d_f, 0.0);
  }
  problem.particles_changed();
  out.risk = measure(problem, *problem.solver, problem.data).risk;
  if (problem.test_solver) out.test_risk = measure(problem, *problem.test_solver, problem.test_data).risk;
  particles.unpack(kept.data());
  problem.particles_changed();
  return out;
}

} // namespace

ForwardResult run_forward(MPI_Comm comm, const Config &given_config, const RunInfo &info, std::ostream *log,
                          bool write, const CommandOptions &options) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::ostream *out = rank == 0 ? log : nullptr;
  // --from: a trained model (its keys, data and snapshot's particles).
  FromRun from;
  const Config config = resolve_command_config(comm, given_config, options, info, Job::Forward, write, from);
  const StoredData source = from.stored();
  MemoryEstimate memory;
  Problem problem = build_problem(comm, config, Job::Forward, from ? &source : nullptr, &memory);
  adopt_from_run_particles(comm, from, problem);
  const std::string header = forward_header(config, problem, memory, from, rank);
  if (end_of_setup(comm, config, info, "forward", header, options.dry_run, out)) return ForwardResult{};
  // No clean stop past the set-up: a signal ends the command as it always
  // did (its file is written once, at the end, under a hidden name).
  restore_default_stop_handlers();
  end_startup_if_stopped(comm);
  if (out) *out << header << std::flush;

  ForwardMeasures measures;
  const ForwardResult result = solve_forward(comm, config, problem, measures);
  if (out) print_forward(*out, config, problem, result, measures);
  std::vector<RunFile::ForwardAttention> attention;
  if (config.output.attention) {
    // The first few held-out and probe sequences: n x n maps per slice.
    constexpr long long kShown = 8;
    if (problem.test_data.N > 0) attention.push_back(attention_of(problem, problem.test_data, "attention", kShown));
    if (problem.probe.N > 0) attention.push_back(attention_of(problem, problem.probe, "attention_probe", kShown));
  }
  RunFile::Ablation ablation;
  if (!config.ablate.slices.empty()) {
    ablation = ablate(config, problem);
    if (out) {
      char line[256];
      const bool held_out = !std::isnan(ablation.test_risk);
      std::snprintf(line, sizeof line, "ablated slices %s: %s %.17g (unablated %.17g)\n", config.ablate.slices.c_str(),
                    held_out ? "test risk" : "risk", held_out ? ablation.test_risk : ablation.risk,
                    held_out ? measures.test.risk : result.risk);
      *out << line << std::flush;
    }
  }
  if (write) {
    const TokenData &data = problem.data;
    RunFile file(config.output.file, *problem.grid, config, info, data, *problem.particles, nullptr,
                 &problem.test_data, &problem.baselines);
    file.append_snapshot(from.step, from.tau, *problem.particles);
    file.write_forward(data, result.tokens_final.data(), result.predictions, result.risk,
                       config.forward.tokens_depth ? &result.tokens_depth : nullptr, result.depths,
                       problem.field->norm().identity() ? std::nan("") : result.drift, measures.train_accuracy,
                       measures.held_out ? &measures.test : nullptr);
    if (!attention.empty() || !ablation.slices.empty()) file.write_forward_extras(attention, ablation);
    file.close();
    if (out) *out << "wrote " << config.output.file << "\n" << std::flush;
  }
  return result;
}

} // namespace mft
