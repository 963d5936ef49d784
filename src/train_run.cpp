#include "mft/train_run.hpp"

#include "mft/error.hpp"
#include "mft/flow.hpp"
#include "mft/model.hpp"
#include "mft/objective.hpp"

#include <cstdio>
#include <memory>

namespace mft {
namespace {

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

} // namespace

TrainResult run_train(MPI_Comm comm, Config config, const RunInfo &info, std::ostream *log,
                      bool write) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::ostream *out = rank == 0 ? log : nullptr;

  Model model = build_model(comm, config, true);
  std::unique_ptr<Objective> objective;
  std::unique_ptr<GradientFlow> flow;
  std::unique_ptr<RunFile> file;
  collectively(comm, [&] {
    objective = std::make_unique<Objective>(comm, model, config.train.lambda);
    flow = std::make_unique<GradientFlow>(comm, *objective, config.train);
    config.train.ts_type = flow->ts_type();
    if (write)
      file = std::make_unique<RunFile>(config.output.file, comm, config, info, model.data,
                                       *model.particles, true);
  });

  const long long steps = config.train.steps;
  if (out) {
    char line[640];
    std::snprintf(line, sizeof line,
                  "mft train: N=%lld n=%lld d=%lld task %s | M=%lld heads x L=%lld slices, d_h=%lld%s"
                  " | depth TS %s %s, k=%lld | train TS %s, dtau=%g, %lld steps, lambda=%g | %d ranks\n",
                  model.data.N, model.data.n, model.data.d, config.data.task.c_str(),
                  config.model.heads, config.model.slices, config.model.head_dim,
                  model.particles->has_mlp() ? " + MLP" : "", config.depth.ts_type.c_str(),
                  config.depth.rk_type.c_str(), config.depth.steps_per_slice,
                  config.train.ts_type.c_str(), config.train.dtau, steps, config.train.lambda, size);
    *out << line
         << "     step          tau                R                Q        grad_norm    s/step"
            "   time left\n"
         << std::flush;
  }

  TrainResult result;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  double last_time = t0;
  long long last_step = 0;
  flow->set_monitor([&](long long step, double tau, const ParticleState &state) {
    const double now = MPI_Wtime();
    result.risks.push_back(state.risk);
    if (file) {
      file->append_history(step, tau, state.risk, state.objective, state.grad_norm, now - t0);
      if (step % config.output.snapshot_every == 0 || step == steps)
        file->append_snapshot(step, tau, *model.particles);
    }
    if (out && (step % config.train.print_every == 0 || step == steps)) {
      const double per_step = step > last_step ? (now - last_time) / (step - last_step) : 0.0;
      char line[256];
      std::snprintf(line, sizeof line, "%9lld %12.6g %16.9e %16.9e %16.9e %9.3f %11s\n", step, tau,
                    state.risk, state.objective, state.grad_norm, per_step,
                    step > 0 ? format_seconds(per_step * (steps - step)).c_str() : "-");
      *out << line << std::flush;
      last_time = now;
      last_step = step;
    }
  });

  result.theta_final.resize(static_cast<size_t>(objective->local_size()));
  model.particles->pack(result.theta_final.data());
  try {
    flow->run(result.theta_final.data(), steps);
  } catch (const InputError &) {
    throw;
  } catch (const Error &) {
    // A diverged run keeps its file: the history and snapshots up to the
    // failure are what its user needs to look at.
    if (file) file->close();
    throw;
  }
  result.seconds = MPI_Wtime() - t0;
  result.risk_initial = result.risks.front();
  result.risk_final = result.risks.back();

  if (file) {
    file->close();
  }
  if (out) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "risk R: %.6e -> %.6e (factor %.3g) in %s, %.3f s per step\n", result.risk_initial,
                  result.risk_final, result.risk_initial / result.risk_final,
                  format_seconds(result.seconds).c_str(),
                  steps > 0 ? result.seconds / static_cast<double>(steps) : 0.0);
    *out << line;
    if (write) *out << "wrote " << config.output.file << "\n";
    *out << std::flush;
  }
  return result;
}

} // namespace mft
