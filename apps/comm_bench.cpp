#include "comm_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace mft::bench {
namespace {

// Seconds of one all-reduce of `count` doubles: the slowest rank's mean over
// enough calls for ~20 ms, the best of three such trials (the VM's noise
// only ever adds time).
double allreduce_seconds(MPI_Comm comm, std::vector<double> &buffer, long long count) {
  const auto once = [&] {
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, comm);
  };
  once(); // warm-up: connections, registration
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  once();
  double first = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_DOUBLE, MPI_MAX, comm);
  const long long calls = std::clamp<long long>(static_cast<long long>(0.02 / std::max(first, 1e-7)), 3, 2000);
  double best = 1e300;
  for (int trial = 0; trial < 3; ++trial) {
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    for (long long c = 0; c < calls; ++c) once();
    double t = (MPI_Wtime() - t0) / static_cast<double>(calls);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    best = std::min(best, t);
  }
  return best;
}

} // namespace

int run_comm_bench(MPI_Comm comm, bool json) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<long long> counts;
  for (long long c = 1; c <= (64LL << 20) / 8; c *= 4) counts.push_back(c);
  std::vector<double> buffer(static_cast<size_t>(counts.back()), 1.0), seconds;
  for (long long c : counts) {
    std::fill(buffer.begin(), buffer.begin() + c, 1.0);
    seconds.push_back(allreduce_seconds(comm, buffer, c));
  }
  // alpha, beta by least squares on the relative error (weights 1/t^2), so
  // the small messages decide alpha and the large ones beta.
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double m = 8.0 * static_cast<double>(counts[i]), w = 1.0 / (seconds[i] * seconds[i]);
    s00 += w, s01 += w * m, s11 += w * m * m, r0 += w * seconds[i], r1 += w * m * seconds[i];
  }
  const double det = s00 * s11 - s01 * s01;
  const double alpha = (s11 * r0 - s01 * r1) / det, beta = (s00 * r1 - s01 * r0) / det;
  if (rank != 0) return 0;
  if (json) {
    std::printf("{\"benchmark\": \"allreduce\", \"ranks\": %d, \"alpha_s\": %.6g, \"beta_s_per_byte\": %.6g, "
                "\"sizes\": [",
                size, alpha, beta);
    for (size_t i = 0; i < counts.size(); ++i)
      std::printf("%s{\"bytes\": %lld, \"seconds\": %.6g}", i ? ", " : "", 8 * counts[i], seconds[i]);
    std::printf("]}\n");
    return 0;
  }
  std::printf("mft-bench --comm: MPI_Allreduce (sum of doubles, in place) on %d rank%s\n", size, size == 1 ? "" : "s");
  std::printf("%12s %14s %12s %14s\n", "bytes", "seconds", "GB/s", "alpha+beta m");
  for (size_t i = 0; i < counts.size(); ++i) {
    const double m = 8.0 * static_cast<double>(counts[i]);
    std::printf("%12lld %14.4e %12.3f %14.4e\n", 8 * counts[i], seconds[i], m / seconds[i] * 1e-9, alpha + beta * m);
  }
  std::printf("alpha-beta fit t(m) = alpha + beta m: alpha = %.3g s, beta = %.3g s/B (%.3g GB/s)\n", alpha, beta,
              beta > 0 ? 1e-9 / beta : 0.0);
  return 0;
}

} // namespace mft::bench
