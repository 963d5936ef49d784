#pragma once
// The attention kernel's per-query-token phases timed one at a time on one
// core (mft-bench prints them): each phase of the forward (scores, the
// score map's weights, the mix) and of the VJP (the paired scores, the
// weights with their cotangent, the paired mix, the spread of the token
// terms) run over and over on one sequence's tokens held in L1, as the
// kernel runs them, and the fastest of several rounds is kept.
#include <string>
#include <vector>

namespace mft {

struct KernelPhase {
  std::string name;
  double ns_per_query = 0; // per query token, all `heads` heads
  double flops = 0;        // per query token (0: not counted, e.g. the score map)
  double ns_per_score = 0; // per query token and head and token seen
};

// n tokens of dimension d, `heads` heads (padded to the vector lanes), the
// score map `attention` without the mask; about `seconds` in all.
std::vector<KernelPhase> time_attention_phases(long long n, long long d, long long heads,
                                               const std::string &attention, double seconds = 1.0);

} // namespace mft
