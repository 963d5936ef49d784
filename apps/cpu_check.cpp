// Runs before anything else in the program (a constructor of the highest
// priority) and is compiled for generic x86-64: a binary built with
// MFT_ARCH=native on an AVX-512 login node, started on a compute node
// without AVX-512, says which features are missing and exits 1, instead of
// dying of SIGILL with no word. MFT_CPU_ABSENT="f1 f2" makes the check treat
// those features as missing (to see the message on any machine).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

extern "C" const char mft_compiled_cpu_features[];

namespace {

bool pretended_absent(const std::string &feature) {
  const char *absent = std::getenv("MFT_CPU_ABSENT");
  if (!absent) return false;
  const std::string list = " " + std::string(absent) + " ";
  return list.find(" " + feature + " ") != std::string::npos;
}

// Whether this CPU has `feature` (names as in mft_compiled_cpu_features).
bool cpu_has(const std::string &f) {
  if (pretended_absent(f)) return false;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (f == "popcnt") return __builtin_cpu_supports("popcnt");
  if (f == "sse4.1") return __builtin_cpu_supports("sse4.1");
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "f16c") return __builtin_cpu_supports("f16c");
  if (f == "bmi") return __builtin_cpu_supports("bmi");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "lzcnt") return __builtin_cpu_supports("lzcnt");
  if (f == "movbe") return __builtin_cpu_supports("movbe");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512vnni") return __builtin_cpu_supports("avx512vnni");
  if (f == "avx512vbmi") return __builtin_cpu_supports("avx512vbmi");
  if (f == "avx512vbmi2") return __builtin_cpu_supports("avx512vbmi2");
  if (f == "avx512ifma") return __builtin_cpu_supports("avx512ifma");
  if (f == "avx512vpopcntdq") return __builtin_cpu_supports("avx512vpopcntdq");
  if (f == "avx512bitalg") return __builtin_cpu_supports("avx512bitalg");
  if (f == "avx512bf16") return __builtin_cpu_supports("avx512bf16");
  if (f == "avx512fp16") return __builtin_cpu_supports("avx512fp16");
  if (f == "gfni") return __builtin_cpu_supports("gfni");
  if (f == "vaes") return __builtin_cpu_supports("vaes");
  if (f == "vpclmulqdq") return __builtin_cpu_supports("vpclmulqdq");
  if (f == "avxvnni") return __builtin_cpu_supports("avxvnni");
  return false; // a name of cpu_features.cpp this list lacks: refuse rather than guess
#else
  return true;
#endif
}

// The first rank of each node says it (its ranks would say the same; a
// job may span nodes of different CPUs).
bool first_rank_of_node() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *rank = std::getenv(name)) return std::strcmp(rank, "0") == 0;
  return true;
}

__attribute__((constructor(101))) void refuse_a_cpu_without_the_compiled_features() {
  std::string missing;
  const std::string compiled = mft_compiled_cpu_features;
  for (size_t begin = 0; begin < compiled.size();) {
    const size_t end = compiled.find(' ', begin + 1);
    const std::string feature = compiled.substr(begin + 1, end == std::string::npos ? end : end - begin - 1);
    if (!feature.empty() && !cpu_has(feature)) missing += (missing.empty() ? "" : " ") + feature;
    begin = end == std::string::npos ? compiled.size() : end;
  }
  if (missing.empty()) return;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  if (first_rank_of_node())
    std::fprintf(stderr,
                 "mft: error: this CPU (%s) lacks %s, which this mft was compiled to use (MFT_ARCH=%s on the "
                 "build machine); rebuild on this machine, or with cmake -DMFT_ARCH=portable (any x86-64) "
                 "or the oldest CPU of the cluster (e.g. -DMFT_ARCH=x86-64-v3 for AVX2)\n",
                 host, missing.c_str(), MFT_ARCH);
  _exit(1);
}

} // namespace
