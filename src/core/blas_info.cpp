#include "mft/core/blas_info.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace mft {
namespace {

// The flags of the first CPU in /proc/cpuinfo.
std::set<std::string> cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    }
  return {};
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

} // namespace

BlasInfo blas_info() {
  BlasInfo info;
  // Looked up at run time: mft links any BLAS, OpenBLAS is one of them.
  using CoreName = char *(*)();
  if (auto f = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename")))
    if (const char *name = f()) info.core = name;
  if (info.core.empty()) return info;
  using Config = char *(*)();
  if (auto f = reinterpret_cast<Config>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
    if (const char *config = f()) info.config = config;
  // Older OpenBLAS builds name no core in their configuration string.
  if (info.config.find(info.core) == std::string::npos)
    info.config += (info.config.empty() ? "OpenBLAS core " : ", core ") + info.core;
  const std::set<std::string> flags = cpu_flags();
  const bool avx512 = flags.count("avx512f") && flags.count("avx512dq") && flags.count("avx512bw") &&
                      flags.count("avx512vl");
  const bool avx2 = flags.count("avx2") && flags.count("fma");
  // OpenBLAS cores whose double-precision kernels use AVX2 or AVX-512.
  static const std::set<std::string> vector_cores = {"haswell", "zen", "skylakex", "cooperlake",
                                                     "sapphirerapids"};
  if ((avx512 || avx2) && !vector_cores.count(lower(info.core)))
    info.advice = std::string("the CPU has ") + (avx512 ? "AVX-512" : "AVX2") + ": OPENBLAS_CORETYPE=" +
                  (avx512 ? "SkylakeX" : "Haswell") + " makes BLAS several times faster";
  return info;
}

std::string blas_summary() {
  const BlasInfo info = blas_info();
  if (info.core.empty()) return "BLAS (not OpenBLAS)";
  return "OpenBLAS core " + info.core + (info.advice.empty() ? "" : " (slow: " + info.advice + ")");
}

std::string blas_provenance() {
  const BlasInfo info = blas_info();
  return info.core.empty() ? "not OpenBLAS" : info.config;
}

} // namespace mft
