#include "mft/core/rng.hpp"

#include "xoshiro.hpp"

#include <cmath>

namespace mft {
namespace {

std::uint64_t splitmix64(std::uint64_t &x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace

RandomStream::RandomStream(std::uint64_t seed, Species species, std::uint64_t l, std::uint64_t m) {
  const std::uint64_t parts[3] = {static_cast<std::uint64_t>(species), l, m};
  seed_from(seed, parts, 3);
}

RandomStream::RandomStream(std::uint64_t seed, Species species, std::uint64_t l, std::uint64_t m,
                           std::uint64_t step) {
  const std::uint64_t parts[4] = {static_cast<std::uint64_t>(species), l, m, step};
  seed_from(seed, parts, 4);
}

std::uint64_t RandomStream::key_hash(std::uint64_t seed, const std::uint64_t *parts, int count) {
  // Fold each key component through the mixer so that nearby keys give
  // unrelated states.
  std::uint64_t h = seed;
  h = splitmix64(h);
  for (int i = 0; i < count; ++i) {
    h ^= parts[i];
    h = splitmix64(h);
  }
  return h;
}

void RandomStream::seed_from(std::uint64_t seed, const std::uint64_t *parts, int count) {
  std::uint64_t h = key_hash(seed, parts, count);
  for (auto &s : s_) s = splitmix64(h);
}

NormalStream::NormalStream(std::uint64_t seed, Species species, std::uint64_t l, std::uint64_t m,
                           std::uint64_t step) {
  const std::uint64_t parts[4] = {static_cast<std::uint64_t>(species), l, m, step};
  const std::uint64_t key = RandomStream::key_hash(seed, parts, 4);
  // Lane j: the key's hash folded with j, then SplitMix64 as RandomStream seeds.
  for (std::uint64_t j = 0; j < 8; ++j) {
    std::uint64_t h = key ^ (j + 1);
    h = splitmix64(h);
    for (auto &word : s_) word[j] = splitmix64(h);
  }
}

std::uint64_t RandomStream::next_u64() { return xoshiro::next(s_); }

double RandomStream::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double RandomStream::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform(); // (0, 1]: log is finite
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double a = 2.0 * M_PI * u2;
  spare_ = r * std::sin(a);
  has_spare_ = true;
  return r * std::cos(a);
}

} // namespace mft
