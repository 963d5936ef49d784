#include "mft/runs/history_columns.hpp"

#include "mft/analysis/slice_attention.hpp"
#include "mft/core/error.hpp"
#include "mft/model/token_norm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mft {

const Measure &HistoryInputs::held_out() {
  if (!held_out_) held_out_ = measure(problem_, *problem_.test_solver, problem_.test_data);
  return *held_out_;
}

const NtkSpectrum &HistoryInputs::kernel() {
  if (!kernel_) {
    // K_V and K_all from one sweep at these particles (the solves leave the
    // particles as they are): K_V's extremes and the stable step they give.
    std::vector<NtkSpectrum> kernels = ntk_spectra(problem_, {"V", "all"});
    report_ = ntk_report(kernels[0], kernels[1], problem_.loss_rows(problem_.data.N));
    kernel_ = std::move(kernels[0]);
    if (out_) {
      char line[240];
      std::snprintf(line, sizeof line,
                    "   ntk K_V at step %lld: lambda_min = %.6e, lambda_max = %.6e; largest stable Euler step "
                    "2 N / lambda_max(K_all) = %.6e\n",
                    step, kernel_->lambda_min(), kernel_->lambda_max(), report_.euler_dtau_max);
      *out_ << line;
    }
  }
  return *kernel_;
}

double HistoryInputs::euler_dtau_max() {
  kernel();
  return report_.euler_dtau_max;
}

std::vector<double> HistoryInputs::test_risk_by_position() {
  const Measure &m = held_out();
  const TokenData &test = problem_.test_data;
  const long long P = problem_.readout->predictions(), k = test.d_out / P;
  std::vector<double> out(static_cast<size_t>(P)), z(static_cast<size_t>(test.N * k)), y(z.size());
  for (long long t = 0; t < P; ++t) {
    for (long long i = 0; i < test.N; ++i)
      for (long long c = 0; c < k; ++c) {
        z[i * k + c] = m.predictions[i * test.d_out + t * k + c];
        y[i * k + c] = test.targets[i * test.d_out + t * k + c];
      }
    out[t] = problem_.loss->risk(z, y, test.N, k, nullptr);
  }
  return out;
}

const std::vector<double> &HistoryInputs::probe_attention() {
  if (!probe_attention_) probe_attention_ = slice_attention(problem_, *problem_.probe_solver, problem_.probe);
  return *probe_attention_;
}

long long history_width(const HistoryColumn &column, const HistoryShape &shape) {
  return column.length ? column.length(shape) : 1;
}

std::string history_element(const std::string &name, long long j) { return name + "[" + std::to_string(j) + "]"; }

namespace {

// sum_a |x_a - xbar|^2 of each of `count` sequences of n tokens in R^d.
std::vector<double> spreads(const double *X, long long count, long long n, long long d) {
  std::vector<double> out(static_cast<size_t>(count), 0.0), mean(static_cast<size_t>(d));
  for (long long i = 0; i < count; ++i) {
    const double *x = X + i * n * d;
    std::fill(mean.begin(), mean.end(), 0.0);
    for (long long a = 0; a < n; ++a)
      for (long long k = 0; k < d; ++k) mean[k] += x[a * d + k] / static_cast<double>(n);
    for (long long a = 0; a < n; ++a)
      for (long long k = 0; k < d; ++k) out[i] += (x[a * d + k] - mean[k]) * (x[a * d + k] - mean[k]);
  }
  return out;
}

} // namespace

double HistoryInputs::token_spread() {
  if (!token_spread_) {
    const TokenData block = problem_.block_of(problem_.data);
    std::vector<double> X0 = block.tokens, X1(block.tokens.size());
    collectively(problem_.grid->world(), [&] { problem_.solver->solve(block.tokens.data(), X1.data()); });
    make_token_norm(config_.model)->initial(X0.data(), block.N * block.n, block.d);
    // Each group's sequences gathered in order, then summed in order: the
    // same number on any rank count.
    const std::vector<double> end = spreads(X1.data(), block.N, block.n, block.d);
    const std::vector<double> start = spreads(X0.data(), block.N, block.n, block.d);
    std::vector<double> both(static_cast<size_t>(2 * block.N));
    for (long long i = 0; i < block.N; ++i) both[2 * i] = end[i], both[2 * i + 1] = start[i];
    const std::vector<double> all = problem_.grid->gather_rows(both, problem_.data.N, 2);
    double at_end = 0.0, at_start = 0.0;
    for (long long i = 0; i < problem_.data.N; ++i) at_end += all[2 * i], at_start += all[2 * i + 1];
    token_spread_ = at_end / at_start;
  }
  return *token_spread_;
}

const std::vector<HistoryColumn> &history_columns() {
  using In = HistoryInputs;
  static const std::vector<HistoryColumn> table = {
      {"step", nullptr, "", "the training step of the row (int64): one for the initial state, one every "
       "output.history_every steps, one for the last step and one for a stop step", "step", 9, "%9.0f", true,
       [](In &r) { return static_cast<double>(r.step); }},
      {"tau", nullptr, "", "its training time tau = step x train.dtau", "tau", 12, "%12.6g", true,
       [](In &r) { return r.tau; }, [](double step, double dtau) { return step * dtau; }},
      {"risk", nullptr, "", "R on the N sequences of /data/tokens at the row's particles (with data.online a "
       "fixed evaluation set the steps never train on)", "R", 16, "%16.9e", true,
       [](In &r) { return r.state.risk; }},
      {"objective", nullptr, "", "Q = R + (lambda/2) x the weight decay's norm, at the same particles", "Q", 16,
       "%16.9e", true, [](In &r) { return r.state.objective; }},
      {"grad_norm", nullptr, "", "sqrt((1/(M L)) sum of |d theta_lm / d tau|^2): the velocity the step uses",
       "grad_norm", 16, "%16.9e", true, [](In &r) { return r.state.grad_norm; }},
      {"batch_risk", [](const HistoryShape &s) { return s.minibatches; }, "minibatches or data.online",
       "the risk of the step's minibatch (risk stays the N sequences')", "batch R", 16, "%16.9e", true,
       [](In &r) { return r.state.batch_risk; }},
      {"accuracy", [](const HistoryShape &s) { return s.classifies; }, "a classifier's loss",
       "training accuracy", "accuracy", 10, "%10.4f", true, [](In &r) { return r.state.accuracy; }},
      {"test_risk", [](const HistoryShape &s) { return s.held_out; }, "held-out data",
       "R on the held-out sequences", "test R", 16, "%16.9e", true, [](In &r) { return r.held_out().risk; }},
      {"test_accuracy", [](const HistoryShape &s) { return s.held_out && s.classifies; },
       "held-out data and a classifier's loss", "held-out accuracy", "test acc", 10, "%10.4f", true,
       [](In &r) { return r.held_out().accuracy; }},
      {"baseline_ratio", [](const HistoryShape &s) { return s.baseline && s.held_out; },
       "held-out data (/baselines)",
       "test_risk over the reference baseline's held-out risk (/baselines.reference: the zero predictor for the "
       "squared loss, the training class frequencies for a classifier's, a task of symbols' own): below 1 the "
       "model beats it",
       "test/base", 10, "%10.4f", true, [](In &r) { return r.baseline_ratio(); }},
      {"baseline_gap", [](const HistoryShape &s) { return s.baseline && s.held_out && s.positions > 0; },
       "a task of symbols (/baselines)",
       "test_risk minus the reference baseline's held-out cross-entropy (/baselines.reference: the in-context "
       "bigram's; text: the 2-gram's), in nats: 0 is the reference predictor's level",
       "gap", 11, "%11.4e", true, [](In &r) { return r.baseline_gap(); }},
      {"test_risk_by_position", [](const HistoryShape &s) { return s.held_out && s.positions > 0; },
       "a task of symbols with held-out data",
       "the held-out loss of each predicting position t = 1 .. n - 1 (test_risk is their mean)", "", 0, "", false,
       nullptr, nullptr, [](const HistoryShape &s) { return s.positions; },
       [](In &r) { return r.test_risk_by_position(); }, "(T, n - 1)"},
      {"previous_token_score", [](const HistoryShape &s) { return s.probe_slices > 0; },
       "a task of symbols with data.probe_sequences > 0",
       "per slice, the head-averaged attention from each position t >= 2 onto t - 1 on the induction "
       "probe, at the tokens entering the slice, averaged over t and the probe's sequences", "", 0, "", false,
       nullptr, nullptr, [](const HistoryShape &s) { return s.probe_slices; },
       [](In &r) {
         const long long L = r.slices(), n = r.probe_tokens();
         return previous_token_scores(r.probe_attention(), r.probe_count(), L, n);
       }, "(T, L)"},
      {"induction_score", [](const HistoryShape &s) { return s.probe_slices > 0; },
       "a task of symbols with data.probe_sequences > 0",
       "per slice, on the induction probe (R = n / 2 symbols repeated twice), the head-averaged attention "
       "from each position t of the second copy onto t - R + 1, the position after t's earlier copy (prefix "
       "matching), averaged over t and the probe's sequences", "", 0, "", false, nullptr, nullptr,
       [](const HistoryShape &s) { return s.probe_slices; },
       [](In &r) {
         return induction_scores(r.probe_attention(), r.probe_count(), r.slices(), r.probe_tokens());
       }, "(T, L)"},
      {"ntk_lambda_min", [](const HistoryShape &s) { return s.ntk; }, "ntk.every > 0",
       "the smallest eigenvalue of K_V every ntk.every steps (NaN between)", "", 0, "", false,
       [](In &r) { return r.kernel_due() ? r.kernel().lambda_min() : std::nan(""); }},
      {"ntk_lambda_max", [](const HistoryShape &s) { return s.ntk; }, "ntk.every > 0",
       "the largest eigenvalue of K_V every ntk.every steps (NaN between)", "", 0, "", false,
       [](In &r) { return r.kernel_due() ? r.kernel().lambda_max() : std::nan(""); }},
      {"euler_dtau_max", [](const HistoryShape &s) { return s.ntk; }, "ntk.every > 0",
       "the largest stable Euler step at the row's particles, 2 N / lambda_max(K_all) (N the rows the loss "
       "averages; the squared loss's linearisation, in units of train.dtau), every ntk.every steps (NaN between)",
       "", 0, "", false, [](In &r) { return r.kernel_due() ? r.euler_dtau_max() : std::nan(""); }},
      {"token_spread", [](const HistoryShape &s) { return s.token_spread; }, "output.token_spread",
       "the training tokens' spread at s = 1 over their spread at s = 0 (after the token norm), "
       "sum_i sum_a |x_ia - xbar_i|^2 at each end with xbar_i sequence i's mean token: below 1 the tokens "
       "cluster through depth", "spread", 10, "%10.4f", true, [](In &r) { return r.token_spread(); }},
      {"wall_time", nullptr, "", "seconds since the run's first start (continued over restarts)", "", 0, "", true,
       [](In &r) { return r.wall_time; }},
  };
  return table;
}

std::vector<const HistoryColumn *> history_columns_of(const HistoryShape &shape) {
  std::vector<const HistoryColumn *> out;
  for (const HistoryColumn &c : history_columns())
    if (!c.present || c.present(shape)) out.push_back(&c);
  return out;
}

const HistoryColumn *find_history_column(const std::string &name) {
  for (const HistoryColumn &c : history_columns())
    if (name == c.name) return &c;
  return nullptr;
}

std::string history_heading(const std::vector<const HistoryColumn *> &columns) {
  std::string out;
  for (const HistoryColumn *c : columns) {
    if (!*c->format) continue;
    char cell[64];
    std::snprintf(cell, sizeof cell, "%s%*s", out.empty() ? "" : " ", c->width, c->heading);
    out += cell;
  }
  return out;
}

std::string history_line(const std::vector<const HistoryColumn *> &columns, const HistoryValues &row) {
  std::string out;
  for (const HistoryColumn *c : columns) {
    if (!*c->format) continue;
    const auto it = row.find(c->name);
    char cell[64];
    if (!out.empty()) out += " ";
    std::snprintf(cell, sizeof cell, c->format, it == row.end() ? std::nan("") : it->second);
    out += cell;
  }
  return out;
}

} // namespace mft
