#include "mft/runs/train_run.hpp"

#include "mft/core/blas_info.hpp"
#include "mft/core/error.hpp"
#include "mft/train/trainer.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/from_run.hpp"
#include "mft/runs/launcher.hpp"
#include "mft/runs/progress_log.hpp"
#include "mft/runs/restart_config.hpp"
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

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

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

// Whether training's step is an Euler step of the squared loss's velocity
// (sgd, or the flow under TS euler): then the kernel's 2 N / lambda_max(K_all)
// bounds the stable train.dtau. Adam's and the heavy ball's steps are not
// dtau times the velocity, and a higher-order TS or the cross-entropy's
// curvature moves the bound, so for them it is stored, not warned of.
bool euler_watch(const Config &c) {
  const auto &methods = optimizer_entries();
  return c.loss.kind == "squared" && has_trait(methods, c.train.method, kVelocityStep) &&
         (!has_trait(methods, c.train.method, kTrainingTs) || c.train.ts_type == "euler");
}

// The time left, in one format for the whole column: hours:minutes:seconds.
std::string clock_time(double s) {
  const long long whole = std::llround(std::max(0.0, s));
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", whole / 3600, whole / 60 % 60, whole % 60);
  return text;
}

void print_header(std::ostream &out, const Config &c, const Problem &problem,
                  const std::string &restart, const RunFileSummary &point, const FromRun &from, bool rank0_note,
                  const MemoryEstimate &memory, const std::string &output, const std::string &method,
                  const std::vector<const HistoryColumn *> *columns) {
  char line[700];
  std::snprintf(line, sizeof line,
                "mft train: N=%lld n=%lld d=%lld task %s | %s"
                " | depth TS %s %s, k=%lld | train %s, dtau=%g, %lld steps, lambda=%g | %s\n",
                problem.data.N, problem.data.n, problem.data.d, c.data.task.c_str(),
                problem.particles->describe().c_str(),
                c.depth.ts_type.c_str(), c.depth.rk_type.c_str(), c.depth.steps_per_slice,
                (has_trait(optimizer_entries(), c.train.method, kTrainingTs) ? "TS " + c.train.ts_type : c.train.method).c_str(), c.train.dtau,
                c.train.steps, c.train.lambda, describe_grid(*problem.grid).c_str());
  out << line << "model: " << describe_variant(c, problem) << "\n"
      << "training: " << method << "\n"
      << "memory: " << memory.summary() << "\n";
  if (!memory.checkpoints.empty()) out << memory.checkpoints << "\n";
  out << "blas: " << blas_summary() << "\n";
  if (restart.empty()) out << particle_source(c, from) << (from ? ", a new run from step 0" : "") << "\n";
  if (!from && rank0_note)
    if (const std::string note = init_file_differences(c, "train"); !note.empty()) out << note << "\n";
  if (!restart.empty()) {
    out << "restart from " << restart << ": step " << point.step << ", tau " << point.tau;
    if (output != restart) out << ", continued in " << output << " (a copy)";
    out << "\n";
    if (const std::string note = build_difference(restart, point); !note.empty()) out << note << "\n";
  }
  if (c.ntk.every > 0)
    out << "stability: every " << c.ntk.every << " steps /history/euler_dtau_max = 2 N / lambda_max(K_all), "
        << (euler_watch(c) ? "a warning once if train.dtau exceeds it"
                           : "stored only (train." + c.train.method +
                                 (c.train.method == "flow" ? " under TS " + c.train.ts_type : "") + " with the " +
                                 c.loss.kind + " loss is not an Euler step it bounds)")
        << "\n";
  if (columns) out << history_heading(*columns) << "    s/step   time left\n" << std::flush;
}

// What the training loop reports at each history row, in order: the row's
// measures (the held-out data's, the kernel's), the /history row, the
// snapshot, the progress line and its JSON row. Called by the trainer with
// the step's particle state (null for a snapshot alone).
class RowReporter {
public:
  struct Setup {
    const Config &config;
    Problem &problem;
    RunFile *file;
    ProgressLog &progress;
    std::ostream *out;
    HistoryShape shape;
    long long first;           // the step the run starts from
    bool resumed_first;        // the first row is in the file already, or off its schedule
    const std::map<std::string, double> &resumed_row; // the file's columns of that row (none off schedule)
    const int &stop_reason;    // set by the stop check before each row
  };

  explicit RowReporter(const Setup &setup)
      : s_(setup), columns_(history_columns_of(setup.shape)), last_step_(setup.first) {
    MPI_Barrier(s_.problem.grid->world());
    last_time_ = step_time_ = MPI_Wtime();
  }
  const std::vector<const HistoryColumn *> &columns() const { return columns_; }
  // The clock of the run's wall time (it continues over restarts).
  void start_clock(double wall_time_before) { t0_ = MPI_Wtime() - wall_time_before; }
  // Called at each step's start by the stop check: the seconds the last step took.
  double step_started() {
    const double now = MPI_Wtime();
    step_seconds_ = now - step_time_;
    step_time_ = now;
    return step_seconds_;
  }
  double row_seconds() const { return row_seconds_; }

  void operator()(long long step, double tau, const ParticleState *state, TrainResult &result) {
    const double now = MPI_Wtime();
    const Config &c = s_.config;
    const bool resumed = s_.resumed_first && step == s_.first;
    HistoryValues row;
    if (state) {
      result.risks.push_back(state->risk);
      result.last_step = step;
      row = measures(step, tau, *state, now, resumed);
      watch_stability(step, row);
      if (const auto gap = row.find("baseline_gap"); gap != row.end()) result.baseline_gap_final = gap->second;
      if (const auto ratio = row.find("baseline_ratio"); ratio != row.end()) {
        result.baseline_ratio_final = ratio->second;
        result.test_risk_final = row.at("test_risk");
      }
    }
    if (s_.file && state && !resumed) s_.file->append_history(row);
    // After the row: a snapshot on a row's step always has its row.
    if (s_.file && (step % c.output.snapshot_every == 0 || step == c.train.steps || s_.stop_reason) &&
        step != s_.file->last_snapshot_step())
      s_.file->append_snapshot(step, tau, *s_.problem.particles);
    // The first row at or after each multiple of train.print_every.
    const bool print_due = step / c.train.print_every > last_step_ / c.train.print_every;
    if (s_.out && state && (print_due || step == c.train.steps || s_.stop_reason || step == s_.first)) {
      print(step, row, now);
      last_time_ = now;
      last_step_ = step;
    }
    if (state) row_seconds_ = std::max(row_seconds_, MPI_Wtime() - step_time_); // the row and its measures
  }

private:
  // Every column's value at this row, as the column computes it; a resumed
  // row's values as the file holds them (its held-out measures and kernel
  // are not measured again), a column the file lacks computed. Off the
  // history's schedule (a stop step resumed) the file holds no row: its
  // held-out data are measured for the terminal and the log only.
  HistoryValues measures(long long step, double tau, const ParticleState &state, double now, bool resumed) {
    HistoryInputs inputs(s_.problem, s_.config, step, tau, now - t0_, state, s_.out);
    HistoryValues row;
    for (const HistoryColumn *c : columns_) {
      if (c->values) { // a vector column: its elements by name[j]
        const std::vector<double> values = c->values(inputs);
        for (size_t j = 0; j < values.size(); ++j) row[history_element(c->name, static_cast<long long>(j))] = values[j];
        continue;
      }
      const auto stored = s_.resumed_row.find(c->name);
      row[c->name] = resumed && stored != s_.resumed_row.end() ? stored->second : c->value(inputs);
    }
    return row;
  }

  // Once a run: train.dtau above the row's largest stable Euler step.
  void watch_stability(long long step, const HistoryValues &row) {
    const auto it = row.find("euler_dtau_max");
    const double dtau = s_.config.train.dtau;
    if (warned_unstable_ || !euler_watch(s_.config) || it == row.end() || !(dtau > it->second)) return;
    warned_unstable_ = true;
    char line[400];
    std::snprintf(line, sizeof line,
                  "warning: train.dtau = %g exceeds the largest stable Euler step %.4g = 2 N / lambda_max(K_all) "
                  "at step %lld: the risk may oscillate or blow up (said once; /history/euler_dtau_max keeps "
                  "every measure)\n",
                  dtau, it->second, step);
    if (s_.out) *s_.out << line << std::flush;
    s_.progress.write("unstable_step", {{"step", static_cast<double>(step)}, {"dtau", dtau},
                                        {"euler_dtau_max", it->second}});
  }

  void print(long long step, const HistoryValues &row, double now) {
    const long long steps = s_.config.train.steps;
    const double per_step = step > last_step_ ? (now - last_time_) / static_cast<double>(step - last_step_) : 0.0;
    const double left = per_step * static_cast<double>(steps - step);
    char tail[64];
    std::snprintf(tail, sizeof tail, " %9.3f %11s\n", per_step,
                  step > s_.first ? clock_time(left).c_str() : "-");
    *s_.out << history_line(columns_, row) << tail << std::flush;
    std::map<std::string, double> logged = {{"seconds_per_step", per_step},
                                            {"seconds_left", step > s_.first ? left : std::nan("")}};
    for (const HistoryColumn *c : columns_)
      if (const auto it = row.find(c->name); c->logged && it != row.end()) logged.insert(*it);
    s_.progress.write("row", logged);
  }

  Setup s_;
  std::vector<const HistoryColumn *> columns_;
  double t0_ = 0.0, last_time_ = 0.0, step_time_ = 0.0, step_seconds_ = 0.0, row_seconds_ = 0.0;
  long long last_step_;
  bool warned_unstable_ = false;
};

// The run file the training writes: `restart`'s (continued in place, or in
// a copy at `output`), or a new one at `output` with its first snapshot;
// none without `write`.
std::unique_ptr<RunFile> open_train_file(MPI_Comm comm, const Config &config, const RunInfo &info, Problem &problem,
                                         Trainer &trainer, const HistoryShape &shape,
                                         const std::string &restart, const RunFileSummary &point,
                                         const std::string &output, bool copy, bool write) {
  const OptimizerState state = trainer.optimizer().state();
  std::unique_ptr<RunFile> file;
  if (!restart.empty()) {
    WriterLock lock;
    if (copy)
      collectively(comm, [&] {
        if (rank_of(comm) != 0) return;
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
    file = RunFile::reopen(output, *problem.grid, *problem.particles, copy ? "output.file" : "--restart", std::move(lock));
    file->keep_optimizer_state(state, *problem.particles);
    file->continue_from(point, config, shape);
    file->annotate_history("end", "running"); // until this start ends (a killed run keeps it)
  } else if (write) {
    file = std::make_unique<RunFile>(output, *problem.grid, config, info, problem.data, *problem.particles, &shape,
                                     &problem.test_data, &problem.baselines);
    file->annotate_history("method", trainer.optimizer().describe());
    file->annotate_history("end", "running");
    file->keep_optimizer_state(state, *problem.particles);
    // The initial particles go to disk before any computation: every file
    // that exists is readable and restartable.
    file->append_snapshot(0, 0.0, *problem.particles);
  }
  return file;
}

// Where the training loop's wall time went, averaged over the ranks.
struct TimeShares {
  double total = 0.0, allreduce = 0.0, file = 0.0;
};

TimeShares time_shares(MPI_Comm comm, double total, double allreduce, double file) {
  double v[3] = {total, allreduce, file};
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, comm);
  return {v[0] / size, v[1] / size, v[2] / size};
}

// The loop's time in three shares, as LAMMPS prints its MPI time: a large
// all-reduce share on several ranks means ranks waiting for one another (a
// busy node, or too little work per rank), where fewer ranks run faster.
void print_time(std::ostream &out, const TimeShares &t, int ranks) {
  if (t.total <= 0) return;
  const double allreduce = std::min(1.0, t.allreduce / t.total), file = std::min(1.0 - allreduce, t.file / t.total);
  char line[320];
  std::snprintf(line, sizeof line,
                "time per rank: %s in the loop: computing %.0f %%, all-reduce %.0f %% (waiting for the other ranks "
                "included), the run file %.0f %%\n",
                format_seconds(t.total).c_str(), 100 * (1 - allreduce - file), 100 * allreduce, 100 * file);
  out << line;
  if (ranks > 1 && allreduce > 0.5)
    out << "most of the time is spent in the all-reduce: at this size fewer ranks would likely be faster "
           "(docs/OPERATIONS.md, \"Small runs: how many ranks\")\n";
}

// The closing lines: the risk's change, and how to continue a stopped run.
void print_end(std::ostream &out, const TrainResult &result, long long first, long long steps, int stop_reason,
               const std::string &output, bool wrote, const RunInfo &info) {
  const long long taken = result.last_step - first;
  char line[320];
  std::snprintf(line, sizeof line, "risk R: %.6e -> %.6e (factor %.3g) in %s, %.3f s per step\n",
                result.risk_initial, result.risk_final, result.risk_initial / result.risk_final,
                format_seconds(result.seconds).c_str(), taken > 0 ? result.seconds / static_cast<double>(taken) : 0.0);
  out << line;
  if (!std::isnan(result.baseline_gap_final)) {
    // Bits per symbol beside nats: the unit of the text literature.
    const double ce = result.test_risk_final, base = ce - result.baseline_gap_final, bits = 1.0 / std::log(2.0);
    std::snprintf(line, sizeof line,
                  "held-out cross-entropy: %.6f nats (%.4f bits per symbol); %s baseline %.6f nats (%.4f bits); "
                  "gap %+.6f nats\n",
                  ce, ce * bits, result.baseline.c_str(), base, base * bits, result.baseline_gap_final);
    out << line;
  } else if (!std::isnan(result.baseline_ratio_final)) {
    std::snprintf(line, sizeof line, "held-out risk: %.6e; baseline %.6e (%s: %s), ratio %.4f\n",
                  result.test_risk_final, result.test_risk_final / result.baseline_ratio_final,
                  result.baseline.c_str(), result.baseline_meaning.c_str(), result.baseline_ratio_final);
    out << line;
  }
  if (result.stopped) {
    // Open MPI's mpirun turns a SIGINT it receives into SIGTERM for the
    // ranks (it cannot forward SIGINT), so a rank cannot tell the two apart.
    std::string reason = stop_reason == kWalltime ? "train.max_walltime" : signal_name(stop_reason);
    if (stop_reason == SIGTERM && std::getenv("OMPI_COMM_WORLD_SIZE"))
      reason = "SIGTERM (from mpirun, which sends it on SIGINT or SIGTERM)";
    std::snprintf(line, sizeof line, "stopped by %s after step %lld of %lld; %s holds it: continue with ",
                  reason.c_str(), result.last_step, steps, output.c_str());
    // Started the same way (launcher and rank count), the continued run
    // gives the uninterrupted one's numbers bit for bit.
    out << line << (info.launcher.empty() ? "" : info.launcher + " ") << shell_word(info.program)
        << " train --restart " << shell_word(output) << "\n";
  }
  if (wrote) out << "wrote " << output << "\n";
  out << std::flush;
}

// Where a run starts: a new run, or the file it continues (a restart, in
// place or in a copy at output.file), with its resolved configuration; every
// input checked before anything is computed or written.
struct TrainStart {
  std::string restart, output;
  std::string option = "--restart"; // the option that named `restart` (--restart or --resume), as refusals name it
  bool copy = false;
  RunFileSummary point;
  FromRun from;      // --from: a new run from a trained model's snapshot
  StoredData stored; // the data of the restart's file or of --from's
  Config config;
  const StoredData *stored_data() const { return restart.empty() && !from ? nullptr : &stored; }
};

TrainStart prepare_train(MPI_Comm comm, const Config &given, const RunInfo &info, const CommandOptions &options,
                         bool write) {
  const int rank = rank_of(comm);
  TrainStart start;
  start.restart = options.resume ? resume_target(comm, given) : options.restart;
  const std::string &restart = start.restart;
  start.option = options.resume ? "--resume" : "--restart";
  const std::string &option = start.option;
  if (!restart.empty())
    collectively(comm, [&] {
      if (rank == 0) check_no_other_writer(option, restart);
      start.point = inspect_run_file(restart, option, true);
    });
  start.stored = {option, restart, start.point.N, start.point.n, start.point.N_test};
  if (!options.from.empty()) {
    const Config merged = from_run_configuration(comm, given, options, start.from);
    start.stored = start.from.stored();
    start.config = resolve_config(comm, merged, Job::Train, &start.stored);
  } else {
    start.config = restart.empty() ? resolve_config(comm, given, Job::Train)
                                   : resolve_config(comm, restart_configuration(comm, given, options.given, restart, option),
                                                    Job::Train, &start.stored);
  }
  const Config &config = start.config;
  start.copy = !restart.empty() && options.given.count("output.file") > 0 && !same_file(config.output.file, restart);
  start.output = restart.empty() || start.copy ? config.output.file : restart;
  collectively(comm, [&] {
    check_petsc_outputs_of_run(config, info, {{option, restart}, {"--from", options.from},
                                              {"output.file", start.output}});
    if (!restart.empty()) check_restart_config(config, start.point, restart, option);
    // A restart only goes on: fewer steps than the file has would leave its
    // /config saying a length the file exceeds.
    if (!restart.empty() && config.train.steps < start.point.step)
      throw InputError(key_error("train.steps", std::to_string(config.train.steps),
                                 restart + " is at step " + std::to_string(start.point.step) +
                                     " already; a restart trains on to train.steps (give at least " +
                                     std::to_string(start.point.step) + ", or read the file's snapshots)"));
    if (write && rank == 0)
      check_progress_log(config.output.log,
                         run_inputs(config, info, {{option, restart}, {"output.file", start.output}}),
                         !restart.empty() && !options.given.count("output.log"));
    if (write && (restart.empty() || start.copy))
      check_new_run_file(comm, config, info, {{option, restart}, {"--from", options.from}},
                         restart.empty() ? "continue its run with mft train --restart " + config.output.file +
                                               " (or add --resume)"
                                         : "");
  });
  return start;
}

} // namespace

TrainResult run_train(MPI_Comm comm, const Config &given_config, const RunInfo &info, std::ostream *log,
                      bool write, const CommandOptions &options) {
  const int rank = rank_of(comm);
  std::ostream *out = rank == 0 ? log : nullptr;
  install_stop_handlers();
  const double started = MPI_Wtime(); // train.max_walltime counts from this start of the run
  const TrainStart start = prepare_train(comm, given_config, info, options, write);
  const Config &config = start.config;
  const std::string &restart = start.restart, &output = start.output;
  const RunFileSummary &point = start.point;
  const bool copy = start.copy;
  MemoryEstimate memory;
  Problem problem = build_problem(comm, config, Job::Train, start.stored_data(), &memory);
  if (start.from) {
    read_from_run_particles(comm, start.from, *problem.particles);
    problem.particles_changed();
  }
  std::unique_ptr<Trainer> trainer;
  collectively(comm, [&] { trainer = std::make_unique<Trainer>(problem, config); });
  const OptimizerState optimizer_state = trainer->optimizer().state();
  if (!restart.empty()) // read-only, and checked before anything is written (or a dry run ends)
    collectively(comm, [&] {
      read_run_snapshot(restart, start.option, point.row, *problem.particles, optimizer_state);
      require_sound_snapshot(*problem.particles, optimizer_state, point.step, start.option, restart,
                              snapshot_of_step(point.step));
    });
  const HistoryShape shape{problem.loss->classifies(), trainer->gradient().minibatches(), problem.test_data.N > 0,
                           config.ntk.every > 0, config.output.token_spread,
                           !std::isnan(reference_nats(problem.baselines)),
                           problem.data.vocab > 0 ? problem.readout->predictions() : 0,
                           problem.probe.N > 0 ? problem.particles->slices() : 0};
  const std::vector<const HistoryColumn *> columns = history_columns_of(shape);
  std::ostringstream header;
  print_header(header, config, problem, restart, point, start.from, rank == 0 && restart.empty(), memory, output,
               trainer->optimizer().describe(), options.dry_run ? nullptr : &columns);
  if (end_of_setup(comm, config, info, "train", header.str(), options.dry_run, out)) return TrainResult{};
  std::unique_ptr<ProgressLog> progress;
  collectively(comm, [&] { progress = std::make_unique<ProgressLog>(write && rank == 0 ? config.output.log : ""); });
  progress->write("start", {{"step", static_cast<double>(point.step)}, {"steps", static_cast<double>(config.train.steps)},
                            {"N", static_cast<double>(problem.data.N)}, {"M", static_cast<double>(config.model.heads)},
                            {"L", static_cast<double>(config.model.slices)}, {"ranks", static_cast<double>(info.ranks)}},
                  {{"command", "train"}, {"file", output}, {"restart", restart}, {"created", info.created},
                   {"method", trainer->optimizer().describe()}});
  std::unique_ptr<RunFile> file =
      open_train_file(comm, config, info, problem, *trainer, shape, restart, point, output, copy, write);
  const long long steps = config.train.steps, first = point.step;
  if (out) *out << header.str() << std::flush;

  TrainResult result;
  for (const Baseline &b : problem.baselines)
    if (b.reference) {
      result.baseline = b.name;
      result.baseline_meaning = b.meaning;
    }
  int stop_reason = 0;
  // The restart's first row: in the file already, or not a row of the
  // history's schedule (a snapshot between rows); never written twice.
  const bool resumed_first =
      !restart.empty() && (point.has_history_row || first % config.output.history_every != 0);
  RowReporter monitor(
      {config, problem, file.get(), *progress, out, shape, first, resumed_first, point.history_row, stop_reason});
  monitor.start_clock(point.wall_time); // wall_time continues over restarts
  trainer->set_stop_check([&](long long) {
    // Every rank's signal flag and wall-time estimate, agreed by all.
    const double step_seconds = monitor.step_started();
    int reason = stop_signal();
    // A stop adds a history row (all N and the held-out sequences) to the step.
    if (config.train.max_walltime > 0 &&
        MPI_Wtime() - started + 2 * step_seconds + monitor.row_seconds() > config.train.max_walltime)
      reason = kWalltime;
    MPI_Allreduce(MPI_IN_PLACE, &reason, 1, MPI_INT, MPI_MAX, comm);
    stop_reason = reason;
    return reason != 0;
  });
  trainer->set_monitor(
      [&](long long step, double tau, const ParticleState *state) { monitor(step, tau, state, result); });

  result.theta_final.resize(static_cast<size_t>(trainer->gradient().local_size()));
  problem.particles->pack(result.theta_final.data());
  const double loop_start = MPI_Wtime();
  try {
    trainer->run(result.theta_final.data(), first, std::max(first, steps));
  } catch (const InputError &) {
    throw;
  } catch (const Error &e) {
    // A diverged run keeps its file: the history and snapshots up to the
    // failure are what its user needs to look at. The failure is what the
    // run reports, whatever closing the file then meets.
    const bool diverged = dynamic_cast<const DivergedError *>(&e) != nullptr;
    progress->write("end", {{"step", static_cast<double>(result.last_step)}},
                    {{"status", diverged ? "diverged" : "failed"}, {"error", e.what()}});
    try {
      // A divergence is agreed by every rank (collective writes); so is the close.
      if (file && diverged) {
        file->annotate_history("end", "diverged");
        file->annotate_history("end_error", e.what());
      }
      if (file) file->close();
    } catch (const Error &) {
    }
    throw;
  }
  result.seconds = MPI_Wtime() - loop_start;
  result.stopped = trainer->stopped();
  result.risk_initial = result.risks.front();
  result.risk_final = result.risks.back();
  try {
    if (file) file->annotate_history("end", result.stopped ? "stopped" : "done");
    if (file) file->close();
  } catch (const Error &e) {
    progress->write("end", {{"step", static_cast<double>(result.last_step)}}, {{"status", "failed"}, {"error", e.what()}});
    throw;
  }
  const TimeShares time = time_shares(comm, MPI_Wtime() - loop_start, trainer->gradient().allreduce_seconds(),
                                      file ? file->seconds() : 0.0);
  progress->write("end",
                  {{"step", static_cast<double>(result.last_step)}, {"risk_initial", result.risk_initial},
                   {"risk_final", result.risk_final}, {"seconds", result.seconds},
                   {"allreduce_seconds", time.allreduce}, {"file_seconds", time.file}},
                  {{"status", result.stopped ? "stopped" : "done"},
                   {"reason", !result.stopped ? "" : stop_reason == kWalltime ? "train.max_walltime"
                                                                               : signal_name(stop_reason)}});
  if (out) {
    print_time(*out, time, info.ranks);
    print_end(*out, result, first, steps, stop_reason, output, file != nullptr, info);
  }
  return result;
}

} // namespace mft
