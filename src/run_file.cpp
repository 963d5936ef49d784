#include "mft/run_file.hpp"

#include "mft/error.hpp"
#include "mft/version.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace mft {
namespace {

void write_config(hid_t group, const Config &config) {
  for (const ConfigEntry &e : config_entries(config))
    std::visit([&](const auto &v) { h5::write_attribute(group, e.key, v); }, e.value);
}

// Chunks of one snapshot of a slice, or of as many heads as fit in ~512 KiB.
std::vector<hsize_t> particle_chunk(long long M, long long rows, long long cols) {
  const long long per_head = std::max<long long>(1, rows * cols);
  const long long heads = std::clamp<long long>(65536 / per_head, 1, std::max<long long>(M, 1));
  return {1, static_cast<hsize_t>(heads), static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
}

} // namespace

RunInfo make_run_info(MPI_Comm comm, int argc, const char *const *argv) {
  RunInfo info;
  for (int i = 0; i < argc; ++i) info.command_line += (i ? " " : "") + std::string(argv[i]);
  MPI_Comm_size(comm, &info.ranks);
  char stamp[32] = "";
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", &tm);
  }
  MPI_Bcast(stamp, sizeof stamp, MPI_CHAR, 0, comm);
  info.created = stamp;
  return info;
}

RunFile::RunFile(const std::string &path, MPI_Comm comm, const Config &config, const RunInfo &info,
                 const TokenData &data, const Particles &particles, bool history)
    : path_(path), comm_(comm) {
  const HeadParticles &heads = particles.heads;
  file_ = h5::create_parallel(path, comm);
  try {
    h5::write_attribute(file_, "format", std::string("mft/1"));
    h5::write_attribute(file_, "mft_version", std::string(kVersion));
    h5::write_attribute(file_, "created", info.created);
    h5::write_attribute(file_, "command_line", info.command_line);
    h5::write_attribute(file_, "ranks", info.ranks);

    h5::Handle cfg = h5::create_group(file_, "config");
    write_config(cfg, config);

    h5::Handle grp = h5::create_group(file_, "data");
    const auto N = static_cast<hsize_t>(data.N), n = static_cast<hsize_t>(data.n),
               d = static_cast<hsize_t>(data.d), d_out = static_cast<hsize_t>(data.d_out);
    h5::write_dataset(file_, "/data/tokens", {N, n, d}, data.tokens.data(), comm);
    h5::write_dataset(file_, "/data/targets", {N, d_out}, data.targets.data(), comm);

    h5::Handle particle_group = h5::create_group(file_, "particles");
    const auto L = static_cast<hsize_t>(heads.L), M = static_cast<hsize_t>(heads.M),
               dh = static_cast<hsize_t>(heads.d_h);
    step_ = h5::create_growing(file_, "/particles/step", {}, H5T_STD_I64LE, {}, 64);
    tau_ = h5::create_growing(file_, "/particles/tau", {}, H5T_IEEE_F64LE, {}, 64);
    Q_ = h5::create_growing(file_, "/particles/Q", {L, M, dh, d}, H5T_IEEE_F64LE,
                            particle_chunk(heads.M, heads.d_h, heads.d));
    K_ = h5::create_growing(file_, "/particles/K", {L, M, dh, d}, H5T_IEEE_F64LE,
                            particle_chunk(heads.M, heads.d_h, heads.d));
    V_ = h5::create_growing(file_, "/particles/V", {L, M, d, d}, H5T_IEEE_F64LE,
                            particle_chunk(heads.M, heads.d, heads.d));
    if (particles.has_mlp()) {
      const NeuronParticles &nn = particles.neurons;
      const auto Mf = static_cast<hsize_t>(nn.M), df = static_cast<hsize_t>(nn.d_f);
      W1_ = h5::create_growing(file_, "/particles/W1", {L, Mf, df, d}, H5T_IEEE_F64LE,
                               particle_chunk(nn.M, nn.d_f, nn.d));
      W2_ = h5::create_growing(file_, "/particles/W2", {L, Mf, d, df}, H5T_IEEE_F64LE,
                               particle_chunk(nn.M, nn.d, nn.d_f));
    }
    if (history) {
      h5::Handle hist = h5::create_group(file_, "history");
      h_step_ = h5::create_growing(file_, "/history/step", {}, H5T_STD_I64LE, {}, 1024);
      h_tau_ = h5::create_growing(file_, "/history/tau", {}, H5T_IEEE_F64LE, {}, 1024);
      h_risk_ = h5::create_growing(file_, "/history/risk", {}, H5T_IEEE_F64LE, {}, 1024);
      h_objective_ = h5::create_growing(file_, "/history/objective", {}, H5T_IEEE_F64LE, {}, 1024);
      h_grad_norm_ = h5::create_growing(file_, "/history/grad_norm", {}, H5T_IEEE_F64LE, {}, 1024);
      h_wall_ = h5::create_growing(file_, "/history/wall_time", {}, H5T_IEEE_F64LE, {}, 1024);
    }
  } catch (...) {
    discard();
    throw;
  }
}

RunFile::~RunFile() {
  if (file_.valid()) discard();
}

void RunFile::append_snapshot(long long step, double tau, const Particles &particles) {
  const HeadParticles &heads = particles.heads;
  const hsize_t row = snapshots_++;
  for (hid_t ds : {step_.get(), tau_.get(), Q_.get(), K_.get(), V_.get(), W1_.get(), W2_.get()})
    if (ds >= 0) h5::set_rows(ds, row + 1);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const hsize_t mine = rank == 0 ? 1 : 0;
  h5::write_block(step_, {row}, {mine}, H5T_NATIVE_LLONG, &step);
  h5::write_block(tau_, {row}, {mine}, H5T_NATIVE_DOUBLE, &tau);
  const auto L = static_cast<hsize_t>(heads.L), m0 = static_cast<hsize_t>(heads.own.begin),
             Ml = static_cast<hsize_t>(heads.own.count()), dh = static_cast<hsize_t>(heads.d_h),
             d = static_cast<hsize_t>(heads.d);
  h5::write_block(Q_, {row, 0, m0, 0, 0}, {1, L, Ml, dh, d}, H5T_NATIVE_DOUBLE, heads.Q.data());
  h5::write_block(K_, {row, 0, m0, 0, 0}, {1, L, Ml, dh, d}, H5T_NATIVE_DOUBLE, heads.K.data());
  h5::write_block(V_, {row, 0, m0, 0, 0}, {1, L, Ml, d, d}, H5T_NATIVE_DOUBLE, heads.V.data());
  if (particles.has_mlp()) {
    const NeuronParticles &nn = particles.neurons;
    const auto n0 = static_cast<hsize_t>(nn.own.begin), Mfl = static_cast<hsize_t>(nn.own.count()),
               df = static_cast<hsize_t>(nn.d_f);
    h5::write_block(W1_, {row, 0, n0, 0, 0}, {1, L, Mfl, df, d}, H5T_NATIVE_DOUBLE, nn.W1.data());
    h5::write_block(W2_, {row, 0, n0, 0, 0}, {1, L, Mfl, d, df}, H5T_NATIVE_DOUBLE, nn.W2.data());
  }
  flush();
}

void RunFile::append_history(long long step, double tau, double risk, double objective,
                             double grad_norm, double wall_time) {
  const hsize_t row = history_rows_++;
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const hsize_t mine = rank == 0 ? 1 : 0;
  h5::set_rows(h_step_, row + 1);
  h5::write_block(h_step_, {row}, {mine}, H5T_NATIVE_LLONG, &step);
  const std::pair<hid_t, double> values[] = {{h_tau_, tau},
                                             {h_risk_, risk},
                                             {h_objective_, objective},
                                             {h_grad_norm_, grad_norm},
                                             {h_wall_, wall_time}};
  for (const auto &[ds, v] : values) {
    h5::set_rows(ds, row + 1);
    h5::write_block(ds, {row}, {mine}, H5T_NATIVE_DOUBLE, &v);
  }
}

void RunFile::flush() {
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) throw Error("HDF5: flushing " + path_ + " failed");
}

void RunFile::write_forward(const TokenData &data, const double *X1, const std::vector<double> &yhat,
                            double risk) {
  h5::Handle grp = h5::create_group(file_, "forward");
  const auto N = static_cast<hsize_t>(data.N), n = static_cast<hsize_t>(data.n),
             d = static_cast<hsize_t>(data.d);
  h5::write_dataset(file_, "/forward/tokens_final", {N, n, d}, X1, comm_);
  h5::write_dataset(file_, "/forward/predictions", {N, 1}, yhat.data(), comm_);
  h5::write_attribute(grp, "risk", risk);
}

void RunFile::close() {
  for (h5::Handle *h : {&step_, &tau_, &Q_, &K_, &V_, &W1_, &W2_, &h_step_, &h_tau_, &h_risk_,
                        &h_objective_, &h_grad_norm_, &h_wall_})
    h->reset();
  file_.reset();
}

void RunFile::discard() {
  close();
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  MPI_Barrier(comm_);
  if (rank == 0) std::remove(path_.c_str());
  MPI_Barrier(comm_);
}

} // namespace mft
