#include "mft/runs/build_problem.hpp"

#include "mft/core/error.hpp"
#include "mft/core/lanes.hpp"
#include "mft/depth/depth.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/core/signals.hpp"
#include "mft/tasks/data.hpp"
#include "mft/tasks/task.hpp"
#include "mft/runs/run_file.hpp"
#include "mft/train/optimizer.hpp"

#include <sstream>
#include <utility>


namespace mft {

namespace {

// Without a task's own baselines, the constant predictor the held-out risk
// is measured against: zero for the squared loss; for a classifier's, the
// training targets' class frequencies (add-one smoothed) as every
// sequence's probabilities, whose argmax is the majority class (its
// accuracy beside). None without held-out sequences, or for targets whose
// class sums are not positive (no probability vectors).
std::vector<Baseline> constant_baselines(const Problem &p) {
  const TokenData &train = p.data, &test = p.test_data;
  if (test.N == 0) return {};
  std::vector<double> yhat(test.targets.size(), 0.0);
  if (!p.loss->classifies())
    return {{"zero", p.risk_of(yhat, test), "the zero predictor, yhat = 0", true, std::nan(""), "risk"}};
  const long long k = test.d_out / p.readout->predictions(), rows = p.loss_rows(train.N);
  std::vector<double> logits(static_cast<size_t>(k), 1.0);
  for (long long r = 0; r < rows; ++r)
    for (long long c = 0; c < k; ++c) logits[static_cast<size_t>(c)] += train.targets[static_cast<size_t>(r * k + c)];
  for (double &v : logits) {
    if (!(v > 0.0) || !std::isfinite(v)) return {}; // targets that are no probability vectors: no frequencies
    v = std::log(v / static_cast<double>(rows + k));
  }
  for (size_t i = 0; i < yhat.size(); ++i) yhat[i] = logits[i % static_cast<size_t>(k)];
  Baseline prior{"prior", p.risk_of(yhat, test),
                 "the training targets' class frequencies (add-one) for every sequence; its argmax is the majority "
                 "class",
                 true};
  prior.accuracy = p.accuracy_of(yhat, test);
  return {prior};
}

// Where a run's data come from, for the messages about their size: the run
// file, the data file, or the configuration.
std::pair<std::string, std::string> data_source(const Config &config, const StoredData *stored) {
  if (stored) return {stored->key, stored->path};
  // A task that reads its sequences from a file: the file.
  if (const auto inputs = task_inputs(config); !inputs.empty()) return inputs.front();
  return {"data.sequences", std::to_string(config.data.sequences)};
}

} // namespace

Config resolve_config(MPI_Comm comm, const Config &user, Job job, const StoredData *stored) {
  Config c = user;
  collectively(comm, [&] {
    validate_keys(c);
    // The sizes: a run file's /data, a data file's shapes, or the keys.
    if (stored) {
      c.data.sequences = stored->N;
      c.data.tokens = stored->n;
      c.data.test_sequences = stored->N_test;
    } else {
      resolve_task_sizes(c); // a data file decides them
    }
    resolve_readout_outputs(c);
    // Given particles decide the architecture's sizes left at their defaults.
    if (!c.init.file.empty() && !stored) resolve_particle_file_shapes(c.init.file, "init.file", c);
    validate_sizes(c);
    for (const long long l : c.ablated_slices())
      if (l >= c.model.slices)
        throw InputError(key_error("ablate.slices", c.ablate.slices,
                                   "slice " + std::to_string(l) + " of model.slices = " +
                                       std::to_string(c.model.slices) + " (0-based)"));
    if (job != Job::Forward && !c.ablate.slices.empty())
      throw InputError(key_error("ablate.slices", c.ablate.slices, "read by mft forward alone"));
    if (job != Job::Forward && c.output.attention)
      throw InputError(key_error("output.attention", "true", "read by mft forward alone"));
    resolve_initial_scales(c); // /config records the scales the particles are drawn with
    // The log-sum-exp test separates N functions from the d + 1 affine ones.
    if (c.cgf.points == 0) c.cgf.points = std::max<long long>(256, c.data.sequences + c.model.d + 1);
    if (!stored) refuse_unread_keys(c);
    check_task(c);
    // Given particles: the file's snapshot, checked against the run's shapes
    // (a restart or mft ntk --from takes its own file's instead).
    if (!c.init.file.empty() && !stored)
      c.init.snapshot = inspect_particle_file(c.init.file, "init.file",
                                              particle_layout(c.model, c.model.heads, 0, 0), c.init.snapshot);
    // The integrators, as the options database chooses them.
    c.depth = resolve_depth_scheme(c.depth, job != Job::Forward);
    if (job == Job::Train) resolve_optimizer(c.train);
  });
  return c;
}

Problem build_problem(MPI_Comm comm, const Config &config, Job job, const StoredData *stored,
                  MemoryEstimate *estimate) {
  const MemoryLimit limit = memory_limit(comm, config);
  Problem problem;
  collectively(comm, [&] { problem.grid = std::make_unique<ProcessGrid>(comm, config.parallel.sequence_groups); });
  const ProcessGrid &grid = *problem.grid;
  collectively(comm, [&] {
    // Before anything large: the memory the run needs. Held-out sequences
    // count with the training ones (tokens and states).
    const long long N = config.data.sequences + config.data.test_sequences, n = config.data.tokens;
    const auto [key, value] = data_source(config, stored);
    // The adjoint's trajectory as the limit allows (the checkpoints change
    // the memory and the time, never the numbers).
    Config planned = config;
    planned.depth.checkpoint_slices =
        plan_depth_checkpoints(limit, config, N, n, grid.head_ranks(), grid.groups(), job, key, value);
    MemoryEstimate e = estimate_memory(limit, planned, N, n, grid.head_ranks(), grid.groups(), job, key, value);
    require_fits(e, planned, N, n, job, key, value);
    const long long N_group = (N + grid.groups() - 1) / grid.groups();
    e.checkpoints = describe_depth_checkpoints(planned, depth_stages(planned.depth),
                                               static_cast<long double>(N_group) * n * config.model.d * sizeof(double));
    if (estimate) *estimate = e;
    problem.depth_config = planned.depth;

    const bool symbols = has_trait(task_entries(), config.data.task, kSymbols);
    if (stored) {
      problem.data = read_run_data(stored->path, stored->key, config.model.d, config.readout.dim,
                                   &problem.test_data, symbols ? config.data.vocab : 0);
      problem.baselines = read_run_baselines(stored->path, stored->key);
    } else {
      TaskData task = make_task_data(config, comm);
      problem.data = std::move(task.train);
      problem.test_data = std::move(task.test);
      problem.baselines = task_baselines(config, problem.test_data);
    }
    if (problem.data.N != config.data.sequences || problem.data.n != config.data.tokens ||
        problem.data.d != config.model.d || problem.test_data.N != config.data.test_sequences)
      throw Error("the data (N " + std::to_string(problem.data.N) + ", n " + std::to_string(problem.data.n) + ", d " +
                  std::to_string(problem.data.d) + ", held out " + std::to_string(problem.test_data.N) +
                  ") do not have the sizes of the resolved configuration");
    // Tokens the token norm cannot take are refused here, on every rank
    // alike (a group's solve sees its block only).
    if (const std::unique_ptr<TokenNorm> norm = make_token_norm(config.model); !norm->identity())
      for (const TokenData *set : {&problem.data, &problem.test_data}) {
        std::vector<double> X = set->tokens;
        norm->initial(X.data(), set->N * set->n, set->d);
      }
    // Every group draws the same particles (streams keyed by seed, species,
    // l, m), or reads them from init.file.
    problem.particles = std::make_unique<Particles>(
        make_particles(config, grid.heads(), config.init.seed, config.model.heads));
    if (!config.init.file.empty() && !stored)
      collectively(comm, [&] { // a rank's share alone may be non-finite
        read_run_snapshot(config.init.file, "init.file", config.init.snapshot, *problem.particles);
        require_sound_snapshot(*problem.particles, {}, 0, "init.file", config.init.file,
                                "row " + std::to_string(config.init.snapshot) + " of /particles");
      });
    problem.field_options = FieldOptions(config.model, config.run.precision == "mixed");
    problem.field = std::make_unique<DepthField>(grid.heads(), grid.block(problem.data.N).count(), problem.data.n,
                                               *problem.particles, problem.field_options);
    problem.solver = std::make_unique<DepthSolver>(*problem.field, problem.depth_config, job != Job::Forward);
    if (problem.solver->ts_type() != config.depth.ts_type || problem.solver->rk_type() != config.depth.rk_type)
      throw Error("the depth TS runs " + problem.solver->ts_type() + " " + problem.solver->rk_type() +
                  ", not the resolved " + config.depth.ts_type + " " + config.depth.rk_type);
    problem.readout = make_readout(config);
    problem.loss = make_loss(config.loss);
    if (problem.baselines.empty()) problem.baselines = constant_baselines(problem);
    if (problem.test_data.N > 0) {
      problem.test_field = std::make_unique<DepthField>(grid.heads(), grid.block(problem.test_data.N).count(),
                                                      problem.test_data.n, *problem.particles, problem.field_options);
      problem.test_solver = std::make_unique<DepthSolver>(*problem.test_field, problem.depth_config, false);
    }
    if (symbols && config.data.probe_sequences > 0) {
      problem.probe = induction_probe(config, config.data.probe_sequences);
      problem.probe_field = std::make_unique<DepthField>(grid.heads(), grid.block(problem.probe.N).count(),
                                                       problem.probe.n, *problem.particles, problem.field_options);
      problem.probe_solver = std::make_unique<DepthSolver>(*problem.probe_field, problem.depth_config, false);
    }
  });
  return problem;
}

bool end_of_setup(MPI_Comm comm, const Config &config, const RunInfo &info, const std::string &command,
                  const std::string &header, bool dry_run, std::ostream *out) {
  refuse_unused_petsc_options(command, info.petsc_options);
  end_startup_if_stopped(comm);
  if (!dry_run) return false;
  if (out) {
    *out << "# mft " << command << " --dry-run: nothing computed or written. The resolved configuration\n"
         << "# below is an INI file: mft " << command << " --config FILE reads it back.\n";
    std::istringstream lines(header);
    for (std::string line; std::getline(lines, line);) *out << "# " << line << "\n";
    *out << "\n" << config_as_ini(config) << std::flush;
  }
  return true;
}

std::string describe_grid(const ProcessGrid &grid) {
  const int ranks = grid.head_ranks() * grid.groups();
  std::string out = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (grid.groups() > 1)
    out += " = " + std::to_string(grid.head_ranks()) + (grid.head_ranks() == 1 ? " head rank" : " head ranks") +
           " x " + std::to_string(grid.groups()) + " sequence groups";
  return out;
}

std::string describe_variant(const Config &c, const Problem &problem) {
  std::string out = "attention " + c.model.attention + (c.model.causal ? ", causal" : "") + " | readout " +
                    c.readout.kind + ", d_out " + std::to_string(c.readout.dim) + " | loss " + c.loss.kind;
  if (problem.test_data.N > 0) out += " | " + std::to_string(problem.test_data.N) + " held-out sequences";
  if (problem.data.vocab > 0)
    out += " | " + std::to_string(problem.data.vocab) + " symbols, positions " + c.model.positions + " (p = " +
           std::to_string(c.model.position_dim) + ")";
  if (problem.field_options.mixed_precision) {
    out += " | precision mixed (kernels' products in float, sums and particles in double)";
    // The float kernels vectorise across a rank's heads: with fewer heads
    // than float lanes the rest is padding, and the step barely beats double.
    const long long per_rank = (c.model.heads + problem.grid->head_ranks() - 1) / problem.grid->head_ranks();
    if (per_rank < lanes_of<float>)
      out += "; " + std::to_string(per_rank) + " heads per rank fill " + std::to_string(per_rank) + " of float's " +
             std::to_string(lanes_of<float>) + " vector lanes, so mixed is little faster than double here";
  }
  if (!problem.baselines.empty() && problem.data.vocab > 0) {
    // The predictors the held-out cross-entropy is measured against.
    out += "\nbaselines (held-out cross-entropy, nats [bits per symbol]):";
    for (const Baseline &b : problem.baselines) {
      char cell[96];
      std::snprintf(cell, sizeof cell, " %s %.4f [%.4f]%s", b.name.c_str(), b.nats, b.nats / std::log(2.0),
                    b.reference ? " (reference)" : "");
      out += cell;
    }
  } else {
    for (const Baseline &b : problem.baselines) {
      char cell[160];
      std::snprintf(cell, sizeof cell, "\nbaseline: held-out risk %.6g of %s", b.nats, b.meaning.c_str());
      out += cell;
      if (!std::isnan(b.accuracy)) {
        std::snprintf(cell, sizeof cell, ", accuracy %.4f", b.accuracy);
        out += cell;
      }
    }
  }
  return out;
}

} // namespace mft
