// Ownership of heads and the keyed random streams (MODEL.md §9).
#include "mft/model/heads.hpp"
#include "mft/core/rng.hpp"
#include "mft/model/particles.hpp"

#include <mpi.h>

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

TEST(Ownership, BlocksCoverEveryHeadOnce) {
  for (long long M : {1LL, 2LL, 7LL, 64LL})
    for (int P : {1, 2, 3, 5}) {
      long long next = 0;
      for (int r = 0; r < P; ++r) {
        const auto o = mft::ParticleBlock::block(M, r, P);
        EXPECT_EQ(o.begin, next);
        EXPECT_GE(o.count(), M / P);
        EXPECT_LE(o.count(), M / P + 1);
        next = o.end;
      }
      EXPECT_EQ(next, M);
    }
  EXPECT_EQ(mft::ParticleBlock::block(2, 2, 3).count(), 0); // a rank may own none
}

TEST(Particles, SameHeadsOnAnyOwnershipAndWidth) {
  const long long L = 3, d_h = 2, d = 3;
  mft::HeadParticles narrow(L, 4, d_h, d, mft::ParticleBlock::block(4, 0, 1));
  mft::HeadParticles wide(L, 9, d_h, d, mft::ParticleBlock::block(9, 0, 1));
  mft::HeadParticles block(L, 9, d_h, d, mft::ParticleBlock::block(9, 1, 2)); // heads 5..8
  narrow.initialise(42, 0.3, 0.7);
  wide.initialise(42, 0.3, 0.7);
  block.initialise(42, 0.3, 0.7);
  for (long long l = 0; l < L; ++l) {
    for (long long m = 0; m < 4; ++m)
      for (long long i = 0; i < d_h * d; ++i) {
        EXPECT_EQ(narrow.q(l, m)[i], wide.q(l, m)[i]);
        EXPECT_EQ(narrow.k(l, m)[i], wide.k(l, m)[i]);
      }
    for (long long m = block.own.begin; m < block.own.end; ++m)
      for (long long i = 0; i < d * d; ++i)
        EXPECT_EQ(block.v(l, m - block.own.begin)[i], wide.v(l, m)[i]);
  }
}

TEST(Particles, InitialLawHasTheConfiguredScales) {
  mft::HeadParticles p(4, 500, 4, 4, mft::ParticleBlock::block(500, 0, 1));
  p.initialise(7, 0.5, 2.0);
  auto moments = [](const std::vector<double> &v) {
    double s = 0, s2 = 0;
    for (double x : v) {
      s += x;
      s2 += x * x;
    }
    const double mean = s / v.size();
    return std::make_pair(mean, std::sqrt(s2 / v.size() - mean * mean));
  };
  // 32000 draws each: the standard error of the std is below 0.5 %.
  auto [mq, sq] = moments(p.Q());
  auto [mv, sv] = moments(p.V());
  EXPECT_NEAR(mq, 0.0, 0.02);
  EXPECT_NEAR(sq, 0.5, 0.01);
  EXPECT_NEAR(mv, 0.0, 0.08);
  EXPECT_NEAR(sv, 2.0, 0.04);
  p.initialise(7, 0.5, 0.0);
  for (double v : p.V()) EXPECT_EQ(v, 0.0);
}

TEST(RandomStream, KeysGiveDistinctStreams) {
  mft::RandomStream a(1, mft::Species::Heads, 0, 0), b(1, mft::Species::Heads, 0, 1),
      c(1, mft::Species::Neurons, 0, 0), d(2, mft::Species::Heads, 0, 0),
      a2(1, mft::Species::Heads, 0, 0);
  const auto x = a.next_u64();
  EXPECT_NE(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  EXPECT_NE(x, d.next_u64());
  EXPECT_EQ(x, a2.next_u64());
  for (int i = 0; i < 1000; ++i) {
    const double u = a.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

// The bulk normals of Langevin's noise: the same key gives the same numbers
// (whatever the count asked, up to it), other keys others; the first four
// moments and the 3-sigma tail of 2^20 of them are those of N(0, 1) within
// 5 standard errors; and no lane repeats another.
TEST(NormalStream, KeyedStandardNormals) {
  const long long count = 1 << 20;
  std::vector<double> z(count), again(1000), other(1000);
  mft::NormalStream(3, mft::Species::Heads, 1, 2, 4).fill(z.data(), count);
  mft::NormalStream(3, mft::Species::Heads, 1, 2, 4).fill(again.data(), 1000); // 1000: not a multiple of 16
  mft::NormalStream(3, mft::Species::Heads, 1, 2, 5).fill(other.data(), 1000);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(again[i], z[i]) << i;
    ASSERT_NE(other[i], z[i]) << i;
  }
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0, tail = 0;
  for (double x : z) {
    ASSERT_TRUE(std::isfinite(x));
    m1 += x, m2 += x * x, m3 += x * x * x, m4 += x * x * x * x, tail += std::fabs(x) > 3;
  }
  const double n = static_cast<double>(count);
  m1 /= n, m2 /= n, m3 /= n, m4 /= n, tail /= n;
  // Standard errors: 1, sqrt 2, sqrt 15, sqrt 96 over sqrt n; the tail's binomial.
  const double se = 1 / std::sqrt(n), p3 = 0.0026997960632601866;
  EXPECT_NEAR(m1, 0.0, 5 * se);
  EXPECT_NEAR(m2, 1.0, 5 * std::sqrt(2.0) * se);
  EXPECT_NEAR(m3, 0.0, 5 * std::sqrt(15.0) * se);
  EXPECT_NEAR(m4, 3.0, 5 * std::sqrt(96.0) * se);
  EXPECT_NEAR(tail, p3, 5 * std::sqrt(p3 * (1 - p3) / n));
  for (long long i = 0; i + 16 <= count; i += 16)
    for (int j = 1; j < 8; ++j) ASSERT_NE(z[i], z[i + j]) << "lanes 0 and " << j << " at " << i;
}

} // namespace

namespace {

// Every registered species (src/model/species/): its registration line's NTK
// groups are those of its matrices, and a copy of the particle system holds
// its own values.
TEST(Species, RegisteredAsTheirFilesSay) {
  const mft::Particles every = mft::every_species_layout(mft::ModelConfig{});
  ASSERT_EQ(every.species().size(), every.registered().size()) << "every registered species present";
  const mft::Particles &layout = every;
  const auto registered = layout.registered();
  ASSERT_EQ(registered.size(), mft::species_entries().size());
  for (size_t i = 0; i < registered.size(); ++i) {
    const mft::ParticleSpecies &s = *registered[i];
    EXPECT_EQ(s.name(), mft::species_entries()[i].id);
    std::set<std::string> parts, registered_parts;
    for (const mft::ParticleMatrix &m : s.matrices()) parts.insert(m.ntk_part);
    std::istringstream line(mft::species_entries()[i].ntk_parts);
    for (std::string part; line >> part;) registered_parts.insert(part);
    EXPECT_EQ(parts, registered_parts) << s.name();
    EXPECT_GT(s.M, 0) << s.name();
    EXPECT_FALSE(s.describe().empty()) << s.name();
  }
  mft::ModelConfig model;
  model.mlp_particles = 3;
  model.mlp_width = 2;
  const mft::Particles owned = mft::particle_layout(model, 2, 0, 1); // this rank owns all
  mft::Particles copy = owned;
  std::vector<double> flat(copy.local_size(), 1.5);
  copy.unpack(flat.data());
  std::vector<double> original(owned.local_size(), 0.0);
  owned.pack(original.data());
  for (double v : original) ASSERT_EQ(v, 0.0) << "a copy shares values with its original";
}

TEST(Species, InitialisedWithTheirOwnScales) {
  mft::Config c;
  c.model.mlp_particles = 2;
  c.init.sigma_qk = 0.0;
  c.init.sigma_v = 2.0;
  c.init.sigma_w1 = 0.0;
  c.init.sigma_w2 = 0.0;
  const mft::Particles p = mft::make_particles(c, MPI_COMM_SELF, 7, 3);
  ASSERT_EQ(p.species().size(), 2u);
  double v_squares = 0.0;
  long long v_count = 0;
  for (const mft::ParticleSpecies *s : p.species())
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      const double sigma = s->matrices()[k].sigma;
      for (double x : s->values(k)) {
        if (sigma == 0.0) ASSERT_EQ(x, 0.0) << s->matrices()[k].name;
        v_squares += x * x;
      }
      if (sigma != 0.0) v_count += static_cast<long long>(s->values(k).size());
    }
  ASSERT_GT(v_count, 100);
  EXPECT_NEAR(std::sqrt(v_squares / v_count), 2.0, 0.3); // only V drawn, at its own scale
}

} // namespace
