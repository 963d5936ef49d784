// The results of mft forward and mft ntk in a run file: /forward and /ntk
// (FORMAT.md), each written once, whole, before the file is published; and
// what a task of symbols adds to /data, with its /baselines.
#include "mft/runs/run_file.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

void RunFile::write_symbols(const TokenData &data, const TokenData *test_data,
                            const std::vector<Baseline> *baselines) {
  const MPI_Comm comm = comm_;
  if (data.vocab > 0) {
    const auto n = static_cast<hsize_t>(data.n), k = static_cast<hsize_t>(data.vocab);
    h5::write_dataset(file_, "/data/symbols", {static_cast<hsize_t>(data.N), n}, data.symbols.data(), comm);
    if (test_data && test_data->N > 0) {
      const auto Nt = static_cast<hsize_t>(test_data->N);
      h5::write_dataset(file_, "/data/test_symbols", {Nt, n}, test_data->symbols.data(), comm);
      if (!test_data->transitions.empty())
        h5::write_dataset(file_, "/data/test_transitions", {Nt, k, k}, test_data->transitions.data(), comm);
    }
  }
  if (!baselines || baselines->empty()) return;
  h5::Handle group = h5::create_group(file_, "baselines");
  h5::write_attribute(group, "unit", baselines->front().unit);
  for (const Baseline &b : *baselines) {
    if (b.reference) h5::write_attribute(group, "reference", b.name);
    h5::write_dataset(file_, "/baselines/" + b.name, {1}, &b.nats, comm);
    h5::Handle ds = h5::open_dataset(group, b.name);
    h5::write_attribute(ds, "meaning", b.meaning);
    if (!std::isnan(b.accuracy)) h5::write_attribute(ds, "accuracy", b.accuracy);
  }
}

void RunFile::write_forward_extras(const std::vector<ForwardAttention> &attention, const Ablation &ablation) {
  size_t values = 0;
  for (const ForwardAttention &a : attention) values += a.values.size();
  const std::string what = "writing /forward's attention and ablation";
  require_space(what, values * sizeof(double));
  phase(what, [&] {
    h5::Handle grp = h5::open_group(file_, "forward");
    for (const ForwardAttention &a : attention) {
      const auto S = static_cast<hsize_t>(a.count), L = static_cast<hsize_t>(a.slices),
                 n = static_cast<hsize_t>(a.tokens);
      h5::write_dataset(file_, "/forward/" + a.name, {S, L, n, n}, a.values.data(), comm_);
    }
    if (ablation.slices.empty()) return;
    h5::write_attribute(grp, "ablated_slices", ablation.slices);
    h5::write_attribute(grp, "risk_ablated", ablation.risk);
    if (!std::isnan(ablation.test_risk)) h5::write_attribute(grp, "test_risk_ablated", ablation.test_risk);
  });
}

void RunFile::write_forward(const TokenData &data, const double *X1, const std::vector<double> &yhat, double risk,
                            const std::vector<double> *tokens_depth, const std::vector<double> &depths, double drift,
                            double accuracy, const Measure *test) {
  const auto N = static_cast<hsize_t>(data.N), n = static_cast<hsize_t>(data.n),
             d = static_cast<hsize_t>(data.d), K1 = static_cast<hsize_t>(depths.size());
  const std::string what = "writing /forward";
  require_space(what, (N * n * d * (1 + (tokens_depth ? K1 : 0)) + yhat.size() + (test ? test->predictions.size() : 0)) *
                         sizeof(double));
  phase(what, [&] {
    h5::Handle grp = h5::create_group(file_, "forward");
    // Each group's block of rows, written by its first head rank.
    const SequenceBlock block = grid_.block(data.N);
    h5::Handle tokens = h5::create_dataset(file_, "/forward/tokens_final", {N, n, d});
    const auto rows = static_cast<hsize_t>(grid_.head_rank() == 0 ? block.count() : 0);
    h5::write_block(tokens, {static_cast<hsize_t>(block.begin), 0, 0}, {rows, rows ? n : 0, rows ? d : 0},
                    H5T_NATIVE_DOUBLE, X1);
    h5::write_dataset(file_, "/forward/predictions",
                      {N, static_cast<hsize_t>(yhat.size()) / std::max<hsize_t>(N, 1)}, yhat.data(), comm_);
    h5::write_attribute(grp, "risk", risk);
    if (!std::isnan(accuracy)) h5::write_attribute(grp, "accuracy", accuracy);
    if (test) {
      const auto rows = static_cast<hsize_t>(data.d_out ? test->predictions.size() / data.d_out : 0);
      h5::write_dataset(file_, "/forward/test_predictions", {rows, static_cast<hsize_t>(data.d_out)},
                        test->predictions.data(), comm_);
      h5::write_attribute(grp, "test_risk", test->risk);
      if (!std::isnan(accuracy)) h5::write_attribute(grp, "test_accuracy", test->accuracy);
    }
    if (tokens_depth) {
      h5::Handle path = h5::create_dataset(file_, "/forward/tokens_depth", {N, K1, n, d});
      h5::write_block(path, {static_cast<hsize_t>(block.begin), 0, 0, 0},
                      {rows, rows ? K1 : 0, rows ? n : 0, rows ? d : 0}, H5T_NATIVE_DOUBLE, tokens_depth->data());
      h5::write_dataset(file_, "/forward/depth", {K1}, depths.data(), comm_);
    }
    if (!std::isnan(drift)) h5::write_attribute(grp, "norm_drift", drift);
  });
}

void RunFile::write_ntk(const NtkRecord &record) {
  const std::string what = "writing /ntk";
  const NtkSpectrum &K = *record.kernel;
  const size_t cgf_size = record.cgf ? record.cgf->singular_values.size() + record.cgf_points->size() : 0;
  require_space(what, (K.gram.size() + K.eigenvalues.size() + cgf_size) * sizeof(double));
  phase(what, [&] {
    h5::Handle grp = h5::create_group(file_, "ntk");
    const auto n = static_cast<hsize_t>(K.N);
    h5::write_dataset(file_, "/ntk/gram", {n, n}, K.gram.data(), comm_);
    h5::write_dataset(file_, "/ntk/eigenvalues", {n}, K.eigenvalues.data(), comm_);
    h5::write_attribute(grp, "part", record.part);
    h5::write_attribute(grp, "snapshot", record.snapshot);
    h5::write_attribute(grp, "lambda_min", K.lambda_min());
    h5::write_attribute(grp, "lambda_max", K.lambda_max());
    if (!std::isnan(record.risk)) h5::write_attribute(grp, "risk", record.risk);
    if (const NtkReport *r = record.report) {
      h5::write_attribute(grp, "kv_lambda_min", r->kv_lambda_min);
      h5::write_attribute(grp, "kv_lambda_max", r->kv_lambda_max);
      h5::write_attribute(grp, "kv_tolerance", r->tolerance);
      h5::write_attribute(grp, "kv_positive_definite", static_cast<long long>(r->kv_positive_definite));
      h5::write_attribute(grp, "rate_bound", r->rate_bound);
      h5::write_attribute(grp, "all_lambda_max", r->all_lambda_max);
      h5::write_attribute(grp, "euler_dtau_max", r->euler_dtau_max);
    }
    if (record.cgf) {
      const std::vector<double> &values = record.cgf->singular_values;
      const auto d = static_cast<hsize_t>(record.d);
      h5::write_dataset(file_, "/ntk/cgf_singular_values", {static_cast<hsize_t>(values.size())}, values.data(),
                        comm_);
      h5::write_dataset(file_, "/ntk/cgf_points", {record.cgf_points->size() / d, d}, record.cgf_points->data(),
                        comm_);
      h5::write_attribute(grp, "cgf_margin", values.back() / values.front());
      if (record.population) h5::write_attribute(grp, "cgf_margin_population", record.population->margin);
    }
  });
}

} // namespace mft
