#include "mft/runs/ntk_run.hpp"

#include "mft/core/error.hpp"
#include "mft/tasks/task.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/core/signals.hpp"

#include <cstdio>
#include <memory>

namespace mft {
namespace {

void print_values(std::ostream &out, const char *label, const std::vector<double> &v, size_t head) {
  out << label;
  char text[32];
  for (size_t i = 0; i < v.size() && i < head; ++i) {
    std::snprintf(text, sizeof text, " %.6e", v[i]);
    out << text;
  }
  if (v.size() > 2 * head) out << " ...";
  for (size_t i = std::max(head, v.size() > head ? v.size() - head : v.size()); i < v.size(); ++i) {
    std::snprintf(text, sizeof text, " %.6e", v[i]);
    out << text;
  }
  out << "\n";
}

// The snapshot mft ntk takes its particles from: row `row` of /particles
// (step 0 and tau 0: the initial particles).
struct SnapshotChoice {
  long long row = 0, step = 0;
  double tau = 0.0;
};

// --from: the run's configuration, data and snapshot, with what the command
// line chooses of mft ntk (ntk.*, cgf.*, output.*, run.*, this run's grid).
Config from_run_file(MPI_Comm comm, const Config &given, const CommandOptions &options, RunFileSummary &point,
                     SnapshotChoice &snapshot) {
  Config merged;
  collectively(comm, [&] {
    point = inspect_run_file(options.from, "--from", false);
    merged = config_from_text(point.config, options.from);
    merged.ntk = given.ntk;
    merged.cgf = given.cgf;
    merged.output = given.output;
    merged.run = given.run;
    merged.parallel = given.parallel; // this run's grid, not the file's
    snapshot.row = options.snapshot < 0 ? point.snapshots + options.snapshot : options.snapshot;
    if (snapshot.row < 0 || snapshot.row >= point.snapshots)
      throw InputError(key_error("--snapshot", std::to_string(options.snapshot),
                                 options.from + " has " + std::to_string(point.snapshots) + " complete snapshots"));
    snapshot.step = point.steps[static_cast<size_t>(snapshot.row)];
    snapshot.tau = point.taus[static_cast<size_t>(snapshot.row)];
  });
  return merged;
}

// --cgf: the empirical log-sum-exp test at its points, and the closed form
// of a family that has one.
void cgf_test(MPI_Comm comm, const Config &config, const Problem &problem, NtkRunResult &result,
              std::vector<double> &points) {
  result.cgf = true;
  collectively(comm, [&] {
    points = cgf_points(config.cgf.points, problem.data.d, config.cgf.radius, config.data.seed);
    result.empirical = empirical_cgf_margin(problem.data, points, config.cgf.points);
    if (const PopulationCgf population = task_population_cgf(config)) {
      result.population = cgf_margin(points, config.cgf.points, problem.data.d, problem.data.N, population);
      result.has_population = true;
    }
  });
}

void print_result(std::ostream &out, const Config &config, const Problem &problem, const NtkRunResult &result) {
  const NtkSpectrum &K = result.spectrum;
  char line[400];
  std::snprintf(line, sizeof line,
                "NTK K_%s = (M L) J J^T: lambda_min = %.6e, lambda_max = %.6e, lambda_min/lambda_max = %.6e\n",
                config.ntk.part.c_str(), K.lambda_min(), K.lambda_max(), K.lambda_min() / K.lambda_max());
  out << line;
  print_values(out, "eigenvalues (ascending):", K.eigenvalues, 4);
  if (result.cgf) {
    std::snprintf(line, sizeof line,
                  "CGF margin (empirical, n=%lld tokens, %lld points in the ball of radius %g): %.6e\n",
                  problem.data.n, config.cgf.points, config.cgf.radius, result.empirical.margin);
    out << line;
    if (result.has_population) {
      std::snprintf(line, sizeof line, "CGF margin (population, closed-form Lambda): %.6e\n",
                    result.population.margin);
      out << line;
    }
    print_values(out, "CGF singular values (descending):", result.empirical.singular_values, 4);
  }
  out << std::flush;
}

} // namespace

NtkRunResult run_ntk(MPI_Comm comm, const Config &given_config, const CommandOptions &options, const RunInfo &info,
                     std::ostream *log, bool write) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::ostream *out = rank == 0 ? log : nullptr;

  // --from: the command line chooses only what mft ntk does with the run's
  // configuration, data and snapshot. Every input is checked before
  // anything is computed or written.
  RunFileSummary point;
  SnapshotChoice snapshot;
  const bool from = !options.from.empty();
  const Config merged = from ? from_run_file(comm, given_config, options, point, snapshot) : given_config;
  const StoredData source{"--from", options.from, point.N, point.n, point.N_test};
  const Config config = resolve_config(comm, merged, Job::Ntk, from ? &source : nullptr);
  collectively(comm, [&] {
    if (write) check_new_run_file(comm, config, info, {{"--from", options.from}});
  });
  MemoryEstimate memory;
  Problem problem = build_problem(comm, config, Job::Ntk, from ? &source : nullptr, &memory);
  collectively(comm, [&] {
    check_ntk_part(config.ntk.part, *problem.particles);
    if (from) {
      read_run_snapshot(options.from, "--from", snapshot.row, *problem.particles);
      require_finite_snapshot(*problem.particles, {}, "--from", options.from, snapshot_of_step(snapshot.step));
      problem.particles_changed();
    }
  });

  char line[400];
  std::snprintf(line, sizeof line,
                "mft ntk: N=%lld n=%lld d=%lld task %s | M=%lld heads x L=%lld slices | part %s%s\n",
                problem.data.N, problem.data.n, problem.data.d, describe_task(config).c_str(), config.model.heads,
                config.model.slices, config.ntk.part.c_str(),
                from ? (" | " + options.from + " step " + std::to_string(snapshot.step)).c_str() : " | initial particles");
  const std::string header = std::string(line) + "model: " + describe_variant(config, problem) + "\n" +
                             "memory: " + memory.summary() + "\n";
  if (end_of_setup(comm, config, info, "ntk", header, options.dry_run, out)) return NtkRunResult{};
  // No clean stop past the set-up: a signal ends the command as it always
  // did (its file is written once, at the end, under a hidden name).
  restore_default_stop_handlers();
  end_startup_if_stopped(comm);

  NtkRunResult result;
  result.spectrum = ntk_spectrum(problem, config.ntk.part);
  std::vector<double> points;
  if (options.cgf) cgf_test(comm, config, problem, result, points);
  if (out) {
    *out << header;
    print_result(*out, config, problem, result);
  }
  if (write) {
    RunFile file(config.output.file, *problem.grid, config, info, problem.data, *problem.particles, nullptr,
                 &problem.test_data);
    file.append_snapshot(snapshot.step, snapshot.tau, *problem.particles);
    file.write_ntk({&result.spectrum, config.ntk.part, snapshot.step, result.cgf ? &result.empirical : nullptr,
                    &points, problem.data.d, result.has_population ? &result.population : nullptr});
    file.close();
    if (out) *out << "wrote " << config.output.file << "\n" << std::flush;
  }
  return result;
}

} // namespace mft
