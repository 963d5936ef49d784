#pragma once
// Minibatches of the training sequences (MODEL.md §10, `sgd`): b of the N
// sequences per step, without replacement. Training runs in passes of
// floor(N / b) steps; pass e orders the N sequences by a permutation drawn
// from the stream (seed, Minibatch, e) and step j of the pass takes
// positions j b .. j b + b - 1 of it. So every sequence is used at most once
// per pass (exactly once when b divides N), the N mod b left over change
// from pass to pass, and the batch of a step depends on (seed, step) alone:
// the same on any rank count and after any restart.
#include <cstdint>
#include <vector>

namespace mft {

// The sequences of step `step`, ascending (b = N: 0 .. N-1, the full data in
// its own order).
std::vector<long long> minibatch_of_step(std::uint64_t seed, long long step, long long N, long long b);

} // namespace mft
