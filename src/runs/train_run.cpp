#include "mft/runs/train_run.hpp"

#include "mft/core/blas_info.hpp"
#include "mft/core/error.hpp"
#include "mft/train/trainer.hpp"
#include "mft/runs/build_model.hpp"
#include "mft/runs/progress_log.hpp"
#include "mft/runs/restart_config.hpp"
#include "mft/analysis/ntk.hpp"
#include "mft/train/objective.hpp"
#include "mft/core/signals.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

namespace mft {
namespace {

constexpr int kWalltime = 1000; // stop reason beside the signal numbers

std::string format_seconds(double s) {
  char text[32];
  if (s < 120)
    std::snprintf(text, sizeof text, "%.1fs", s);
  else if (s < 7200)
    std::snprintf(text, sizeof text, "%.1fm", s / 60);
  else
    std::snprintf(text, sizeof text, "%.1fh", s / 3600);
  return text;
}

void print_header(std::ostream &out, const Config &c, const Model &model,
                  const std::string &restart, const RunPoint &point, const MemoryEstimate &memory,
                  const std::string &output, const std::string &method, bool minibatches, bool columns) {
  char line[700];
  std::snprintf(line, sizeof line,
                "mft train: N=%lld n=%lld d=%lld task %s | M=%lld heads x L=%lld slices, d_h=%lld%s"
                " | depth TS %s %s, k=%lld | train %s, dtau=%g, %lld steps, lambda=%g | %s\n",
                model.data.N, model.data.n, model.data.d, c.data.task.c_str(), c.model.heads,
                c.model.slices, c.model.head_dim, model.particles->has_mlp() ? " + MLP" : "",
                c.depth.ts_type.c_str(), c.depth.rk_type.c_str(), c.depth.steps_per_slice,
                (c.train.method == "flow" ? "TS " + c.train.ts_type : c.train.method).c_str(), c.train.dtau,
                c.train.steps, c.train.lambda, describe_grid(*model.grid).c_str());
  out << line << "model: " << describe_variant(c, model) << "\n"
      << "training: " << method << "\n"
      << "memory: " << memory.summary() << "\n"
      << "blas: " << blas_summary() << "\n";
  if (!restart.empty()) {
    out << "restart from " << restart << ": step " << point.step << ", tau " << point.tau;
    if (output != restart) out << ", continued in " << output << " (a copy)";
    out << "\n";
  }
  if (!columns) return;
  out << "     step          tau                R                Q        grad_norm";
  if (minibatches) out << "          batch R";
  if (model.loss->classifies()) out << "   accuracy";
  if (model.test_data.N > 0) out << "           test R";
  if (model.test_data.N > 0 && model.loss->classifies()) out << "   test acc";
  out << "    s/step   time left\n" << std::flush;
}

} // namespace

TrainResult run_train(MPI_Comm comm, Config config, const RunInfo &info, std::ostream *log,
                      bool write, const CommandOptions &options) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::ostream *out = rank == 0 ? log : nullptr;
  install_stop_handlers();
  const double started = MPI_Wtime(); // train.max_walltime counts from this start of the run
  const std::string restart = options.resume ? resume_target(comm, config) : options.restart;
  const bool output_given = options.given.count("output.file") > 0;
  if (!restart.empty()) config = restart_configuration(comm, config, options.given, restart);

  // Every input is checked before anything is computed or written. A
  // restart continues its file in place, or a copy when output.file names
  // another file.
  RunPoint point;
  const bool copy = !restart.empty() && output_given && !same_file(config.output.file, restart);
  const std::string output = restart.empty() || copy ? config.output.file : restart;
  collectively(comm, [&] {
    if (!restart.empty()) {
      if (rank == 0) check_no_other_writer("--restart", restart);
      point = inspect_run_file(restart, "--restart", true);
      check_restart_config(config, point, restart, false);
    }
    if (write && rank == 0) check_progress_log(config.output.log, output);
    if (write && (restart.empty() || copy))
      check_new_run_file(comm, config, info, {{"--restart", restart}},
                         restart.empty() ? "continue its run with mft train --restart " + config.output.file +
                                               " (or add --resume)"
                                         : "");
  });
  const StoredData stored{"--restart", restart, point.N, point.n, point.N_test};
  MemoryEstimate memory;
  Model model = build_model(comm, config, Job::Train, restart.empty() ? nullptr : &stored, &memory);
  std::unique_ptr<Trainer> trainer;
  collectively(comm, [&] {
    trainer = std::make_unique<Trainer>(model, config);
    if (!restart.empty()) check_restart_config(config, point, restart, true);
  });
  const bool minibatches = trainer->gradient().minibatches();
  const OptimizerState optimizer_state = trainer->optimizer().state();
  if (!restart.empty()) // read-only, and checked before anything is written (or a dry run ends)
    collectively(comm, [&] {
      read_run_snapshot(restart, "--restart", point.row, *model.particles, optimizer_state);
      require_finite_snapshot(*model.particles, optimizer_state, "--restart", restart, point.step);
    });
  std::ostringstream header;
  print_header(header, config, model, restart, point, memory, output, trainer->optimizer().describe(),
               minibatches, !options.dry_run);
  if (end_of_setup(config, info, "train", header.str(), options.dry_run, out)) return TrainResult{};
  std::unique_ptr<ProgressLog> progress;
  collectively(comm, [&] { progress = std::make_unique<ProgressLog>(write && rank == 0 ? config.output.log : ""); });
  progress->write("start", {{"step", static_cast<double>(point.step)}, {"steps", static_cast<double>(config.train.steps)},
                            {"N", static_cast<double>(model.data.N)}, {"M", static_cast<double>(config.model.heads)},
                            {"L", static_cast<double>(config.model.slices)}, {"ranks", static_cast<double>(info.ranks)}},
                  {{"command", "train"}, {"file", output}, {"restart", restart}, {"created", info.created},
                   {"method", trainer->optimizer().describe()}});

  std::unique_ptr<RunFile> file;
  if (!restart.empty()) {
    WriterLock lock;
    if (copy)
      collectively(comm, [&] {
        if (rank != 0) return;
        PendingOutput copied(output, config.output.overwrite);
        try {
          copied.fill_from(restart);
          copied.publish();
        } catch (...) {
          copied.remove();
          throw;
        }
        lock = std::move(copied.lock());
      });
    file = RunFile::reopen(output, *model.grid, *model.particles, copy ? "output.file" : "--restart", std::move(lock));
    file->keep_optimizer_state(optimizer_state, *model.particles);
    file->continue_from(point, config);
  } else if (write) {
    std::vector<std::string> extra;
    if (model.loss->classifies()) extra.push_back("accuracy");
    if (model.test_data.N > 0) extra.push_back("test_risk");
    if (model.test_data.N > 0 && model.loss->classifies()) extra.push_back("test_accuracy");
    if (config.ntk.every > 0) extra.insert(extra.end(), {"ntk_lambda_min", "ntk_lambda_max"});
    if (minibatches) extra.push_back("batch_risk");
    file = std::make_unique<RunFile>(output, *model.grid, config, info, model.data, *model.particles, true, extra,
                                     &model.test_data);
    file->annotate_history("method", trainer->optimizer().describe());
    file->keep_optimizer_state(optimizer_state, *model.particles);
    // The initial particles go to disk before any computation: every file
    // that exists is readable and restartable.
    file->append_snapshot(0, 0.0, *model.particles);
  }
  const long long steps = config.train.steps, first = point.step;
  if (out) *out << header.str() << std::flush;

  TrainResult result;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime() - point.wall_time; // wall_time continues over restarts
  double last_time = MPI_Wtime(), step_time = MPI_Wtime(), step_seconds = 0.0, row_seconds = 0.0;
  long long last_step = first;
  int stop_reason = 0;

  trainer->set_stop_check([&](long long) {
    // Every rank's signal flag and wall-time estimate, agreed by all.
    const double now = MPI_Wtime();
    step_seconds = now - step_time;
    step_time = now;
    int reason = stop_signal();
    // A stop adds a history row (all N and the held-out sequences) to the step.
    if (config.train.max_walltime > 0 && now - started + 2 * step_seconds + row_seconds > config.train.max_walltime)
      reason = kWalltime;
    MPI_Allreduce(MPI_IN_PLACE, &reason, 1, MPI_INT, MPI_MAX, comm);
    stop_reason = reason;
    return reason != 0;
  });
  const long long every = config.output.history_every;
  trainer->set_monitor([&](long long step, double tau, const ParticleState *state) {
    const double now = MPI_Wtime();
    // The restart's first row: in the file already, or not a row of the
    // history's schedule (a snapshot between rows); never written twice.
    const bool resumed = !restart.empty() && step == first && (point.has_history_row || step % every != 0);
    if (state) {
      result.risks.push_back(state->risk);
      result.last_step = step;
    }
    std::map<std::string, double> extra;
    const bool classifies = model.loss->classifies();
    Measure test;
    if (state) {
      if (classifies) extra["accuracy"] = state->accuracy;
      if (minibatches) extra["batch_risk"] = state->batch_risk;
      if (model.test_data.N > 0 && !resumed) {
        test = measure(model, *model.test_solver, model.test_data);
        extra["test_risk"] = test.risk;
        if (classifies) extra["test_accuracy"] = test.accuracy;
      }
      if (config.ntk.every > 0 && step % config.ntk.every == 0 && !resumed) {
        // The kernel at these particles; the solves leave the particles as they are.
        const NtkSpectrum K = ntk_spectrum(model, "V");
        extra["ntk_lambda_min"] = K.lambda_min();
        extra["ntk_lambda_max"] = K.lambda_max();
        if (out) {
          char line[160];
          std::snprintf(line, sizeof line, "   ntk K_V at step %lld: lambda_min = %.6e, lambda_max = %.6e\n",
                        step, K.lambda_min(), K.lambda_max());
          *out << line;
        }
      }
    }
    if (file && state && !resumed)
      file->append_history(step, tau, state->risk, state->objective, state->grad_norm, now - t0, extra);
    // After the row: a snapshot on a row's step always has its row.
    if (file && (step % config.output.snapshot_every == 0 || step == steps || stop_reason) &&
        step != file->last_snapshot_step())
      file->append_snapshot(step, tau, *model.particles);
    // The first row at or after each multiple of train.print_every.
    const bool print_due = step / config.train.print_every > last_step / config.train.print_every;
    if (out && state && (print_due || step == steps || stop_reason || step == first)) {
      const double per_step = step > last_step ? (now - last_time) / (step - last_step) : 0.0;
      char line[256];
      std::snprintf(line, sizeof line, "%9lld %12.6g %16.9e %16.9e %16.9e", step, tau, state->risk,
                    state->objective, state->grad_norm);
      *out << line;
      if (minibatches) {
        std::snprintf(line, sizeof line, " %16.9e", state->batch_risk);
        *out << line;
      }
      if (classifies) {
        std::snprintf(line, sizeof line, " %10.4f", state->accuracy);
        *out << line;
      }
      if (model.test_data.N > 0) {
        // A resumed row's held-out measures are in the file already.
        std::snprintf(line, sizeof line, " %16.9e", resumed ? std::nan("") : test.risk);
        *out << line;
        if (classifies) {
          std::snprintf(line, sizeof line, " %10.4f", resumed ? std::nan("") : test.accuracy);
          *out << line;
        }
      }
      std::snprintf(line, sizeof line, " %9.3f %11s\n", per_step,
                    step > first ? format_seconds(per_step * (steps - step)).c_str() : "-");
      *out << line << std::flush;
      std::map<std::string, double> row = extra;
      row.erase("ntk_lambda_min"), row.erase("ntk_lambda_max");
      row.insert({{"step", static_cast<double>(step)}, {"tau", tau}, {"risk", state->risk},
                  {"objective", state->objective}, {"grad_norm", state->grad_norm}, {"wall_time", now - t0},
                  {"seconds_per_step", per_step},
                  {"seconds_left", step > first ? per_step * static_cast<double>(steps - step) : std::nan("")}});
      progress->write("row", row);
      last_time = now;
      last_step = step;
    }
    if (state) row_seconds = std::max(row_seconds, MPI_Wtime() - step_time); // the row and its measures
  });

  result.theta_final.resize(static_cast<size_t>(trainer->gradient().local_size()));
  model.particles->pack(result.theta_final.data());
  const double loop_start = MPI_Wtime();
  try {
    trainer->run(result.theta_final.data(), first, std::max(first, steps));
  } catch (const InputError &) {
    throw;
  } catch (const Error &e) {
    // A diverged run keeps its file: the history and snapshots up to the
    // failure are what its user needs to look at.
    if (file) file->close();
    progress->write("end", {{"step", static_cast<double>(result.last_step)}},
                    {{"status", dynamic_cast<const DivergedError *>(&e) ? "diverged" : "failed"}, {"error", e.what()}});
    throw;
  }
  result.seconds = MPI_Wtime() - loop_start;
  result.stopped = trainer->stopped();
  result.risk_initial = result.risks.front();
  result.risk_final = result.risks.back();
  if (file) file->close();
  progress->write("end",
                  {{"step", static_cast<double>(result.last_step)}, {"risk_initial", result.risk_initial},
                   {"risk_final", result.risk_final}, {"seconds", result.seconds}},
                  {{"status", result.stopped ? "stopped" : "done"},
                   {"reason", !result.stopped ? "" : stop_reason == kWalltime ? "train.max_walltime"
                                                                               : signal_name(stop_reason)}});

  if (out) {
    const long long taken = result.last_step - first;
    char line[320];
    std::snprintf(line, sizeof line, "risk R: %.6e -> %.6e (factor %.3g) in %s, %.3f s per step\n",
                  result.risk_initial, result.risk_final, result.risk_initial / result.risk_final,
                  format_seconds(result.seconds).c_str(),
                  taken > 0 ? result.seconds / static_cast<double>(taken) : 0.0);
    *out << line;
    if (result.stopped) {
      // Open MPI's mpirun turns a SIGINT it receives into SIGTERM for the
      // ranks (it cannot forward SIGINT), so a rank cannot tell the two apart.
      std::string reason = stop_reason == kWalltime ? "train.max_walltime" : signal_name(stop_reason);
      if (stop_reason == SIGTERM && std::getenv("OMPI_COMM_WORLD_SIZE"))
        reason = "SIGTERM (from mpirun, which sends it on SIGINT or SIGTERM)";
      std::snprintf(line, sizeof line,
                    "stopped by %s after step %lld of %lld; %s holds it: continue with "
                    "mft train --restart %s\n",
                    reason.c_str(),
                    result.last_step, steps, output.c_str(), output.c_str());
      *out << line;
    }
    if (file) *out << "wrote " << output << "\n";
    *out << std::flush;
  }
  return result;
}

} // namespace mft
