#pragma once
// Tasks of symbols (MODEL.md §13): sequences s_1 .. s_n from a vocabulary of
// k symbols, embedded as tokens x_t(0) = [e_{s_t}; pi_t; 0] (the one-hot
// symbol, a positional code in p coordinates, zeros to d), with the
// next-token targets e_{s_{t+1}} of every position t < n, and the held-out
// cross-entropies of the predictors a trained model is measured against.
#include "mft/core/config.hpp"
#include "mft/model/tokens.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace mft {

// The positional code pi_t in p coordinates of position t = 1 .. n:
// sinusoidal pi_{t,2i} = sin(t w_i), pi_{t,2i+1} = cos(t w_i),
// w_i = 10000^(-2i/p); one-hot e_t (p >= n).
void position_code(const std::string &kind, long long p, long long t, double *out);

// `count` sequences of n = data.tokens symbols with the configuration's
// sizes (vocab k, d, d_out = (n - 1) k), symbols zero, tokens unset.
TokenData symbol_data(const Config &config, long long count);

// data.tokens and data.targets from data.symbols: the embedding of
// model.positions and model.position_dim, and target row i holds the n - 1
// one-hot vectors e_{s_{t+1}}, t = 1 .. n - 1, one after the other.
void embed_symbols(const ModelConfig &model, TokenData &data);

// The checks every task of symbols makes: k >= 2, n >= 2,
// d >= k + p, one-hot positions with p >= n; InputError naming the key.
void check_symbol_model(const Config &config);

// The induction probe (Olsson et al.'s prefix matching): `count` sequences
// of R = n / 2 uniform symbols repeated twice (a last symbol of odd n drawn
// too), sequence i from the stream (data.test_seed, DataProbe, i); embedded
// like the task's.
TokenData induction_probe(const Config &config, long long count);

// A predictor's held-out risk, over the same rows the loss averages (every
// t < n of every sequence with the next-token readout): the mean
// cross-entropy in nats for a task of symbols and any classifier, the
// squared loss's |yhat - y|^2 / 2 otherwise.
struct Baseline {
  std::string name;    // /baselines/<name>
  double nats = 0.0;   // the risk (nats for the cross-entropy)
  std::string meaning; // the predictor, in words
  bool reference = false; // the one /history/baseline_gap and baseline_ratio are measured against
  double accuracy = std::nan(""); // a classifier's: the predictor's held-out accuracy
  std::string unit = "nats";       // /baselines.unit: nats, or the squared loss's "risk"
};

// The in-context predictors of MODEL.md §13 on `test`: uniform (log k),
// unigram (add-one counts of s_1..s_t), bigram (add-alpha counts of the
// transitions seen: the Bayes predictor for Dirichlet(alpha) rows; the
// reference), and, when `test` holds the transition matrices, the oracle.
std::vector<Baseline> in_context_baselines(const TokenData &test, double alpha);

// The reference baseline's nats (NaN when there is none).
double reference_nats(const std::vector<Baseline> &baselines);

} // namespace mft
