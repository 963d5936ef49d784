// text: character-level next-token prediction on a UTF-8 text file
// (data.file, read through zlib: plain or gzip-compressed, as Debian
// ships its texts). The vocabulary is the file's characters (at most
// kMaxTextVocab); the last tenth of the text is held out; a sequence is a
// window of n characters at a start drawn from its stream: training windows
// (and online batches) from the first nine tenths, held-out ones from the
// last tenth. The baselines are the n-gram ladder (n = 1 .. 4) counted on the
// training part with add-one smoothing.
#include "mft/tasks/symbols.hpp"
#include "mft/tasks/task.hpp"

#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include <zlib.h>

namespace mft {

MFT_TASK(text, "text", kStreams | kReadsFile | kSymbols, "character-level next-token prediction on the UTF-8 text data.file (its last tenth held out)")

namespace {

constexpr long long kMaxTextVocab = 256;       // distinct characters
constexpr long long kMaxTextBytes = 1LL << 28; // 256 MiB

struct Text {
  std::vector<std::uint32_t> characters; // the vocabulary: code points, ascending
  std::vector<std::int32_t> symbols;     // the text as indices into it
  long long train_end = 0;               // [0, train_end) trains, [train_end, size) is held out
};

// The code points of UTF-8 `bytes`; InputError naming data.file at the first
// byte that does not start or continue a valid sequence.
std::vector<std::uint32_t> decode_utf8(const std::string &bytes, const std::string &path) {
  std::vector<std::uint32_t> out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    std::uint32_t cp = extra == 0 ? b : extra == 1 ? b & 0x1Fu : extra == 2 ? b & 0x0Fu : b & 0x07u;
    bool ok = extra >= 0 && i + static_cast<size_t>(extra) < bytes.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(bytes[i + static_cast<size_t>(k)]);
      ok = (c >> 6) == 2;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static const std::uint32_t least[] = {0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= least[extra] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    if (!ok)
      throw InputError(key_error("data.file", path, "not UTF-8 text: byte " + std::to_string(i) +
                                                        " does not start a valid character"));
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

Text read_text(const std::string &path) {
  if (path.empty()) throw InputError(key_error("data.file", path, "data.task = text needs a text file"));
  require_regular_input("data.file", path);
  // gzread passes a file that is not gzip through as it is.
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(path.c_str(), "rb"), gzclose);
  if (!in) throw InputError(key_error("data.file", path, "could not be opened"));
  std::string bytes;
  char buffer[1 << 16];
  for (int got; (got = gzread(in.get(), buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      int code = 0;
      throw InputError(key_error("data.file", path, std::string("could not be read (") + gzerror(in.get(), &code) + ")"));
    }
    bytes.append(buffer, static_cast<size_t>(got));
    if (static_cast<long long>(bytes.size()) > kMaxTextBytes)
      throw InputError(key_error("data.file", path, "larger than " + std::to_string(kMaxTextBytes >> 20) +
                                                        " MiB of text"));
  }
  const std::vector<std::uint32_t> cps = decode_utf8(bytes, path);
  // The online batches read the file at every step: a table from code
  // point to symbol, not a sort.
  Text text;
  const std::uint32_t top = cps.empty() ? 0 : *std::max_element(cps.begin(), cps.end());
  std::vector<std::int32_t> index(static_cast<size_t>(top) + 1, -1);
  for (const std::uint32_t cp : cps) index[cp] = 0;
  for (std::uint32_t cp = 0; cp <= top; ++cp)
    if (index[cp] == 0) {
      index[cp] = static_cast<std::int32_t>(text.characters.size());
      text.characters.push_back(cp);
    }
  const auto k = static_cast<long long>(text.characters.size());
  if (k > kMaxTextVocab)
    throw InputError(key_error("data.file", path, "has " + std::to_string(k) + " distinct characters; at most " +
                                                      std::to_string(kMaxTextVocab) + " make a vocabulary"));
  if (k < 2) throw InputError(key_error("data.file", path, "needs at least 2 distinct characters"));
  text.symbols.reserve(cps.size());
  for (const std::uint32_t cp : cps) text.symbols.push_back(index[cp]);
  const auto total = static_cast<long long>(cps.size());
  text.train_end = total - total / 10;
  return text;
}

// `count` windows of n characters of [begin, end), the start of window i
// uniform from stream_of(i).
TokenData windows(const Config &config, const Text &text, long long begin, long long end, long long count,
                  const SequenceStreams &stream_of) {
  TokenData data = symbol_data(config, count);
  const long long n = data.n, starts = end - begin - n + 1;
  for (long long i = 0; i < count; ++i) {
    RandomStream rng = stream_of(i);
    const long long start =
        begin + std::min(starts - 1, static_cast<long long>(rng.uniform() * static_cast<double>(starts)));
    std::copy_n(text.symbols.begin() + start, n, data.symbols.begin() + i * n);
  }
  embed_symbols(config.model, data);
  return data;
}

TokenData sequences(const Config &config, long long count, const SequenceStreams &stream_of) {
  const Text text = read_text(config.data.file);
  return windows(config, text, 0, text.train_end, count, stream_of);
}

TaskData make(const Config &config, MPI_Comm) {
  const Text text = read_text(config.data.file);
  const DataConfig &c = config.data;
  TaskData out;
  out.train = windows(config, text, 0, text.train_end, c.sequences, training_streams(c.seed));
  out.test = windows(config, text, text.train_end, static_cast<long long>(text.symbols.size()), c.test_sequences,
                     held_out_streams(c.test_seed));
  return out;
}

void resolve_sizes(Config &c) {
  const Text text = read_text(c.data.file);
  const auto k = static_cast<long long>(text.characters.size());
  if (c.data.vocab != DataConfig{}.vocab && c.data.vocab != k)
    throw InputError(key_error("data.vocab", std::to_string(c.data.vocab),
                               "data.file " + c.data.file + " has " + std::to_string(k) +
                                   " characters (leave data.vocab out: the file decides it)"));
  c.data.vocab = k;
  const long long held_out = static_cast<long long>(text.symbols.size()) - text.train_end;
  if (c.data.tokens > held_out)
    throw InputError(key_error("data.tokens", std::to_string(c.data.tokens),
                               "longer than the held-out last tenth of data.file " + c.data.file + " (" +
                                   std::to_string(held_out) + " characters)"));
}

std::vector<std::pair<std::string, std::string>> inputs(const Config &c) { return {{"data.file", c.data.file}}; }

// The n-gram ladder: for each order m = 1 .. 4, the add-one estimate
// (count(context, j) + 1) / (count(context) + k) with the m - 1 characters
// before (fewer at a window's start: the model sees the window alone),
// counted on the training part.
std::vector<Baseline> baselines(const Config &config, const TokenData &test) {
  const Text text = read_text(config.data.file);
  const long long k = test.vocab, n = test.n;
  constexpr long long kOrders = 4;
  // A context of length c < 4 and its next symbol, as one integer.
  const auto key = [](const std::int32_t *context, long long length, long long next) {
    std::uint64_t h = static_cast<std::uint64_t>(length);
    for (long long u = 0; u < length; ++u) h = h * 257u + static_cast<std::uint64_t>(context[u]) + 1u;
    return h * 257u + static_cast<std::uint64_t>(next + 1);
  };
  std::unordered_map<std::uint64_t, double> grams, contexts; // next = -1 marks a context's total
  for (long long t = 0; t < text.train_end; ++t)
    for (long long length = 0; length < kOrders && length <= t; ++length) {
      const std::int32_t *context = text.symbols.data() + t - length;
      grams[key(context, length, text.symbols[static_cast<size_t>(t)])] += 1.0;
      contexts[key(context, length, -1)] += 1.0;
    }
  std::vector<Baseline> out;
  for (long long order = 1; order <= kOrders; ++order) {
    double total = 0.0;
    for (long long i = 0; i < test.N; ++i) {
      const long long *s = test.symbols.data() + i * n;
      std::vector<std::int32_t> window(s, s + n);
      for (long long t = 1; t < n; ++t) {
        const long long length = std::min(order - 1, t);
        const std::int32_t *context = window.data() + t - length;
        const auto g = grams.find(key(context, length, s[t]));
        const auto c = contexts.find(key(context, length, -1));
        const double p = ((g == grams.end() ? 0.0 : g->second) + 1.0) /
                         ((c == contexts.end() ? 0.0 : c->second) + static_cast<double>(k));
        total -= std::log(p);
      }
    }
    const std::string name = std::to_string(order) + "-gram";
    out.push_back({name, total / static_cast<double>(test.N * (n - 1)),
                   "the training part's " + name + " counts, add-one: (count(context, j) + 1) / (count(context) + k), "
                   "the " + std::to_string(order - 1) + " characters before as context (fewer at a window's start)",
                   order == 2});
  }
  out.insert(out.begin(), Baseline{"uniform", std::log(static_cast<double>(k)), "every character 1/k", false});
  return out;
}

} // namespace

TaskEntry text_task() {
  TaskEntry entry;
  entry.make = make;
  entry.sequences = sequences;
  entry.check = check_symbol_model;
  entry.resolve_sizes = resolve_sizes;
  entry.inputs = inputs;
  entry.baselines = baselines;
  return entry;
}

} // namespace mft
