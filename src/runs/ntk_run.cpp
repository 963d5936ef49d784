#include "mft/runs/ntk_run.hpp"

#include "mft/core/error.hpp"
#include "mft/tasks/task.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/from_run.hpp"
#include "mft/core/signals.hpp"

#include <algorithm>
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
  std::snprintf(line, sizeof line, "risk = %.17g\n", result.risk);
  out << line;
  std::snprintf(line, sizeof line,
                "NTK K_%s = (M L) J J^T: lambda_min = %.6e, lambda_max = %.6e, lambda_min/lambda_max = %.6e\n",
                config.ntk.part.c_str(), K.lambda_min(), K.lambda_max(), K.lambda_min() / K.lambda_max());
  out << line;
  print_values(out, "eigenvalues (ascending):", K.eigenvalues, 4);
  // What [B] makes of it (ntk.hpp's NtkReport): for the squared loss, no weight decay.
  const NtkReport &r = result.report;
  std::snprintf(line, sizeof line,
                "K_V positive definite: %s (lambda_min(K_V) = %.6e %s %.3e = 100 rows eps lambda_max(K_V))\n",
                r.kv_positive_definite ? "yes" : "no", r.kv_lambda_min, r.kv_positive_definite ? ">" : "<=",
                r.tolerance);
  out << line;
  if (r.kv_positive_definite)
    std::snprintf(line, sizeof line,
                  "linear rate bound: R(tau) <= R(0) exp(-rate tau) near these particles, rate = "
                  "2 lambda_min(K_V)/N = %.6e (N = %lld, the rows the loss averages)\n",
                  r.rate_bound, r.sequences);
  else
    std::snprintf(line, sizeof line, "linear rate bound: none (K_V is not positive definite)\n");
  out << line;
  std::snprintf(line, sizeof line,
                "largest stable Euler step: dtau < 2 N / lambda_max(K_all) = %.6e (lambda_max(K_all) = %.6e; "
                "K = (M L) J J^T, M L = %lld, so in units of train.dtau)\n",
                r.euler_dtau_max, r.all_lambda_max, config.model.heads * config.model.slices);
  out << line;
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

  // --from: the model, the data and the particles of a run file's
  // snapshot; the command line chooses what mft ntk does with them. Every
  // input is checked before anything is computed or written.
  FromRun from;
  const Config config = resolve_command_config(comm, given_config, options, info, Job::Ntk, write, from);
  const StoredData source = from.stored();
  MemoryEstimate memory;
  Problem problem = build_problem(comm, config, Job::Ntk, from ? &source : nullptr, &memory);
  collectively(comm, [&] { check_ntk_part(config.ntk.part, *problem.particles); });
  adopt_from_run_particles(comm, from, problem);

  char line[400];
  std::snprintf(line, sizeof line,
                "mft ntk: N=%lld n=%lld d=%lld task %s | %s | part %s%s\n",
                problem.data.N, problem.data.n, problem.data.d, describe_task(config).c_str(),
                problem.particles->describe().c_str(), config.ntk.part.c_str(),
                from ? (" | " + options.from + " step " + std::to_string(from.step)).c_str() : " | initial particles");
  std::string header = std::string(line) + "model: " + describe_variant(config, problem) + "\n" +
                       "memory: " + memory.summary() + "\n";
  if (!memory.checkpoints.empty()) header += memory.checkpoints + "\n";
  if (rank == 0 && !from)
    if (const std::string note = init_file_differences(config, "ntk"); !note.empty()) header += note + "\n";
  if (end_of_setup(comm, config, info, "ntk", header, options.dry_run, out)) return NtkRunResult{};
  // No clean stop past the set-up: a signal ends the command as it always
  // did (its file is written once, at the end, under a hidden name).
  restore_default_stop_handlers();
  end_startup_if_stopped(comm);

  NtkRunResult result;
  // The part asked for, and K_V and K_all for the report, in one sweep.
  std::vector<std::string> parts = {config.ntk.part};
  for (const char *part : {"V", "all"})
    if (config.ntk.part != part) parts.push_back(part);
  std::vector<NtkSpectrum> kernels = ntk_spectra(problem, parts);
  const auto kernel = [&](const std::string &part) {
    return static_cast<size_t>(std::find(parts.begin(), parts.end(), part) - parts.begin());
  };
  // N: the rows the loss averages over (N (n - 1) for the next-token readout).
  result.report = ntk_report(kernels[kernel("V")], kernels[kernel("all")], problem.loss_rows(problem.data.N));
  result.spectrum = std::move(kernels.front());
  // The risk at these particles: the training's own at that snapshot.
  result.risk = measure(problem, *problem.solver, problem.data).risk;
  std::vector<double> points;
  if (options.cgf) cgf_test(comm, config, problem, result, points);
  if (out) {
    *out << header;
    print_result(*out, config, problem, result);
  }
  if (write) {
    RunFile file(config.output.file, *problem.grid, config, info, problem.data, *problem.particles, nullptr,
                 &problem.test_data, &problem.baselines);
    file.append_snapshot(from.step, from.tau, *problem.particles);
    file.write_ntk({&result.spectrum, config.ntk.part, from.step, result.cgf ? &result.empirical : nullptr,
                    &points, problem.data.d, result.has_population ? &result.population : nullptr,
                    &result.report, result.risk});
    file.close();
    if (out) *out << "wrote " << config.output.file << "\n" << std::flush;
  }
  return result;
}

} // namespace mft
