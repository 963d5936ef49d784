#pragma once
// The columns of a training run's /history (FORMAT.md), declared once, as
// LAMMPS declares its computes: each column's name, when a run has it, what
// it means, how its value is computed from the row's inputs and how the
// progress line prints it. The run file creates, reopens and checks the
// columns from this table and records their order in /history.columns (for
// the readers); the training loop fills each row from it; the progress
// line, its heading, the JSON log's rows and `mft --format-reference` are
// printed from it. Adding a column (a new measure of the particles or of
// the tokens through depth): a line of the table, and, if it needs a
// measurement the row does not make yet, a member of HistoryInputs.
#include "mft/analysis/ntk.hpp"
#include "mft/core/config.hpp"
#include "mft/tasks/problem.hpp"
#include "mft/train/objective.hpp"
#include "mft/train/step_gradient.hpp"

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace mft {

// What decides which columns a run has.
struct HistoryShape {
  bool classifies = false;  // the loss classifies: accuracies
  bool minibatches = false; // steps on minibatches (or online data): the batch's risk
  bool held_out = false;    // held-out sequences: their risk (and accuracy)
  bool ntk = false;         // ntk.every > 0: K_V's extreme eigenvalues
  bool token_spread = false; // output.token_spread: the tokens' spread through depth
  bool baseline = false;     // a reference baseline (/baselines): a task of symbols' own, or the constant predictor's
  long long positions = 0;   // a task of symbols: the predicting positions n - 1 (0: none)
  long long probe_slices = 0; // with the induction probe: its scores' length L (0: no probe)
};

// What a row's values are computed from: the step, its particles' state
// (risk, objective, velocity), and the measurements that cost solves, each
// made once per row when a column asks for it.
class HistoryInputs {
public:
  HistoryInputs(Problem &problem, const Config &config, long long step, double tau, double wall_time,
                const ParticleState &state, std::ostream *out)
      : step(step), tau(tau), wall_time(wall_time), state(state), problem_(problem), config_(config), out_(out) {}
  const long long step;
  const double tau, wall_time; // wall_time: seconds since the run's first start
  const ParticleState &state;
  // R and accuracy of the held-out sequences at the row's particles.
  const Measure &held_out();
  // Whether the kernel is measured at this row (every ntk.every steps).
  bool kernel_due() const { return config_.ntk.every > 0 && step % config_.ntk.every == 0; }
  // K_V at the row's particles (its extremes and the stable step printed
  // once as it is made, from one sweep with K_all).
  const NtkSpectrum &kernel();
  // The largest stable Euler step there, 2 N / lambda_max(K_all) (ntk_report).
  double euler_dtau_max();
  // The training tokens' spread at s = 1 over their spread at s = 0 (after
  // the token norm): sum_i sum_a |x_ia - xbar_i|^2 at each end, xbar_i the
  // mean token of sequence i; below 1 the tokens cluster through depth.
  double token_spread();
  // The held-out risk above the task's reference baseline (the in-context
  // bigram's cross-entropy; text: the 2-gram's).
  double baseline_gap() { return held_out().risk - reference_nats(problem_.baselines); }
  // The held-out risk over the reference baseline's.
  double baseline_ratio() { return held_out().risk / reference_nats(problem_.baselines); }
  // The held-out loss of each predicting position (n - 1 values).
  std::vector<double> test_risk_by_position();
  // The head-averaged attention of every slice on the induction probe
  // (analysis/slice_attention.hpp), made once per row.
  const std::vector<double> &probe_attention();
  long long slices() const { return problem_.particles->slices(); }
  long long probe_count() const { return problem_.probe.N; }
  long long probe_tokens() const { return problem_.probe.n; }

private:
  Problem &problem_;
  const Config &config_;
  std::ostream *out_;
  std::optional<Measure> held_out_;
  std::optional<NtkSpectrum> kernel_;
  NtkReport report_; // of kernel_ and K_all
  std::optional<double> token_spread_;
  std::optional<std::vector<double>> probe_attention_;
};

struct HistoryColumn {
  const char *name; // /history/<name>
  // Whether a run of this shape has the column; null: every run has it.
  bool (*present)(const HistoryShape &);
  const char *when; // `present` in words, for the format's reference ("" for every run)
  const char *meaning;
  // The progress line: the heading, right-aligned over a value of `width`
  // characters printed by `format` ("" for a column it does not show).
  const char *heading;
  int width;
  const char *format;
  bool logged; // in the JSON log's row events
  double (*value)(HistoryInputs &); // its value at a row (NaN: none at this row)
  // Its value at a row written before the column existed (a restart of an
  // older file adds the column), from that row's step and train.dtau; null:
  // it cannot be known now (NaN).
  double (*past)(double step, double dtau) = nullptr;
  // A column of `length` values a row (/history/<name> is (T, length); its
  // value ignored, its values computed instead; no `format`, not logged);
  // null: one value.
  long long (*length)(const HistoryShape &) = nullptr;
  std::vector<double> (*values)(HistoryInputs &) = nullptr;
  const char *shape = ""; // its shape in the format's reference: "(T, L)"
};

// The values a row of `column` holds in a run of `shape` (1 for a scalar).
long long history_width(const HistoryColumn &column, const HistoryShape &shape);
// The name of element j of a vector column in HistoryValues: "name[j]".
std::string history_element(const std::string &name, long long j);

// Every column, in the order of the file and the progress line; `step`
// (int64) first, the others float64.
const std::vector<HistoryColumn> &history_columns();

// The columns a run of `shape` has, step included, in table order.
std::vector<const HistoryColumn *> history_columns_of(const HistoryShape &shape);

// The column named `name`, or null.
const HistoryColumn *find_history_column(const std::string &name);

// One row's values by column name (step as a double); a column without a
// value reads NaN.
using HistoryValues = std::map<std::string, double>;

// The progress line's heading and one row of it: the shown columns of
// `columns` in order, each " " + its value in its format (NaN for none).
std::string history_heading(const std::vector<const HistoryColumn *> &columns);
std::string history_line(const std::vector<const HistoryColumn *> &columns, const HistoryValues &row);

} // namespace mft
