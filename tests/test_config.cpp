// Configuration: defaults, INI file, command-line precedence, and errors that
// name the key and the value.
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/runs/launcher.hpp"
#include "mft/core/config.hpp"
#include "mft/core/error.hpp"
#include "mft/core/ini.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string temp_ini(const std::string &text) {
  char name[] = "/tmp/mft-test-XXXXXX";
  const int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

// The InputError message of parse_config(args) and of its resolution (the
// checks across keys, the task's), or "" if it passed.
std::string error_of(const std::vector<std::string> &args) {
  try {
    mft::resolve_config(MPI_COMM_WORLD, mft::parse_config(args), mft::Job::Forward);
  } catch (const mft::InputError &e) {
    return e.what();
  }
  return "";
}

TEST(Config, Defaults) {
  const mft::Config c = mft::parse_config({});
  EXPECT_EQ(c.model.d, 8);
  EXPECT_EQ(c.depth.ts_type, "rk");
  EXPECT_EQ(c.readout_coord(), 7);
  const auto w = c.readout_weights();
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ(w[7], 1.0);
}

// The initial scales: auto until resolved, then the species' values for the
// sizes (MODEL.md §9), those of d = d_h = d_f = 8 below; a given value
// (0 included) stays, and "auto" may be given too.
TEST(Config, InitialScalesFollowTheSizes) {
  const mft::Config eight = mft::resolve_config(MPI_COMM_WORLD, mft::parse_config({}), mft::Job::Forward);
  EXPECT_EQ(eight.init.sigma_qk, 0.5);
  EXPECT_EQ(eight.init.sigma_v, 1.0);
  EXPECT_EQ(eight.init.sigma_w1, 0.5);
  EXPECT_EQ(eight.init.sigma_w2, 0.5);
  const mft::Config wide = mft::resolve_config(
      MPI_COMM_WORLD,
      mft::parse_config({"--model.d", "32", "--model.head_dim", "16", "--model.mlp_width", "2",
                         "--model.mlp_particles", "3", "--init.sigma_w1", "auto"}),
      mft::Job::Forward);
  EXPECT_DOUBLE_EQ(wide.init.sigma_qk, 0.5 * std::sqrt(8.0 / 32) * std::pow(8.0 / 16, 0.25));
  EXPECT_DOUBLE_EQ(wide.init.sigma_v, std::sqrt(8.0 / 32));
  EXPECT_DOUBLE_EQ(wide.init.sigma_w1, 0.5 * std::sqrt(8.0 / 32));
  EXPECT_EQ(wide.init.sigma_w2, 0.5); // d_f = 2 < 8: as at 8
  const mft::Config given = mft::resolve_config(
      MPI_COMM_WORLD, mft::parse_config({"--model.d", "32", "--init.sigma_qk", "0.3", "--init.sigma_v", "0"}),
      mft::Job::Forward);
  EXPECT_EQ(given.init.sigma_qk, 0.3);
  EXPECT_EQ(given.init.sigma_v, 0.0);
  EXPECT_EQ(mft::default_text("init.sigma_qk"), "auto");
  EXPECT_NE(error_of({"--init.sigma_v", "-1"}).find("init.sigma_v = -1"), std::string::npos);
  EXPECT_NE(error_of({"--init.sigma_qk", "automatic"}).find("init.sigma_qk = automatic"), std::string::npos);
}

TEST(Config, CommandLineOverridesIniFile) {
  const std::string ini = temp_ini("[model]\nheads = 12\nslices = 3\n[init]\nsigma_v = 0.25\n");
  const mft::Config c = mft::parse_config({"--config", ini, "--model.heads", "5"});
  EXPECT_EQ(c.model.heads, 5);
  EXPECT_EQ(c.model.slices, 3);
  EXPECT_EQ(c.init.sigma_v, 0.25);
  std::remove(ini.c_str());
}

TEST(Config, EntriesListEveryFormatKey) {
  const mft::Config c = mft::parse_config({"--readout.coord", "1"});
  std::vector<std::string> keys;
  for (const auto &e : mft::config_entries(c)) keys.push_back(e.key);
  for (const char *k : {"model.d", "model.head_dim", "model.heads", "model.slices", "model.mlp_width",
                        "model.mlp_particles", "model.activation", "depth.ts_type", "depth.rk_type",
                        "depth.steps_per_slice", "readout.kind", "readout.coord", "readout.weights",
                        "init.seed", "init.sigma_qk", "init.sigma_v", "data.task", "data.sequences",
                        "data.tokens", "data.seed", "data.file", "output.file"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
  for (const auto &e : mft::config_entries(c))
    if (e.key == "readout.coord") EXPECT_EQ(std::get<long long>(e.value), 1);
}

TEST(Config, ErrorsNameKeyAndValue) {
  EXPECT_NE(error_of({"--model.hedas", "4"}).find("model.hedas"), std::string::npos);
  EXPECT_NE(error_of({"--model.heads", "0"}).find("model.heads = 0"), std::string::npos);
  EXPECT_NE(error_of({"--model.slices", "-3"}).find("model.slices = -3"), std::string::npos);
  EXPECT_NE(error_of({"--model.d", "abc"}).find("model.d = abc"), std::string::npos);
  EXPECT_NE(error_of({"--model.d", "4x"}).find("model.d = 4x"), std::string::npos);
  EXPECT_NE(error_of({"--init.sigma_v", "nan"}).find("init.sigma_v = nan"), std::string::npos);
  EXPECT_NE(error_of({"--readout.kind", "max"}).find("readout.kind = max"), std::string::npos);
  EXPECT_NE(error_of({"--readout.coord", "8"}).find("readout.coord = 8"), std::string::npos);
  EXPECT_NE(error_of({"--readout.weights", "1,2"}).find("readout.weights = 1,2"), std::string::npos);
  EXPECT_NE(error_of({"--model.heads"}).find("model.heads"), std::string::npos);
  EXPECT_NE(error_of({"--config", "/nonexistent/run.ini"}).find("/nonexistent/run.ini"),
            std::string::npos);
  EXPECT_NE(error_of({"--data.task", "file"}).find("data.file"), std::string::npos);
  EXPECT_NE(error_of({"--model.d", "1"}).find("model.d = 1"), std::string::npos);

  const std::string ini = temp_ini("[model]\nhaeds = 3\n");
  EXPECT_NE(error_of({"--config", ini}).find("model.haeds"), std::string::npos);
  std::remove(ini.c_str());
  const std::string ini2 = temp_ini("[init]\nsigma_qk = big\n");
  EXPECT_NE(error_of({"--config", ini2}).find("init.sigma_qk = big"), std::string::npos);
  std::remove(ini2.c_str());
}

TEST(Config, ErrorMessagesAreOneLine) {
  for (const auto &args : std::vector<std::vector<std::string>>{
           {"--model.hedas", "4"}, {"--model.heads", "x"}, {"stray"}, {"--model.heads", "1", "--model.heads", "2"}}) {
    const std::string m = error_of(args);
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Config, IniFileIsCheckedWholeWithFileAndLine) {
  // A bad or duplicate INI value is refused even when the command line sets the key.
  const std::string bad = temp_ini("[model]\nheads = 4\n[init]\nsigma_v = big\n");
  const std::string e1 = error_of({"--config", bad, "--init.sigma_v", "1"});
  EXPECT_EQ(e1.rfind("init.sigma_v = big: not a finite number (" + bad + " line 4)", 0), 0u) << e1;
  const std::string dup = temp_ini("[model]\nheads = 4\nslices = 2\nheads = 5\n");
  const std::string e2 = error_of({"--config", dup, "--model.heads", "6"});
  EXPECT_EQ(e2.rfind("model.heads = 5: given more than once (" + dup + " line 4), first at line 2", 0), 0u) << e2;
  const std::string syntax = temp_ini("[model]\nheads 4\n");
  const std::string e3 = error_of({"--config", syntax});
  EXPECT_EQ(e3.rfind("--config = " + syntax + ": line 2: ", 0), 0u) << e3;
  const std::string top = temp_ini("heads = 4\n");
  EXPECT_NE(error_of({"--config", top}).find("line 1"), std::string::npos);
  const std::string qualified = temp_ini("# comment\nmodel.heads = 4  # trailing\n[data]\n; c\nsequences = 9\n");
  const mft::Config c = mft::parse_config({"--config", qualified});
  EXPECT_EQ(c.model.heads, 4);
  EXPECT_EQ(c.data.sequences, 9);
  for (const std::string &f : {bad, dup, syntax, top, qualified}) std::remove(f.c_str());
  EXPECT_EQ(error_of({"--config", "/tmp"}), "--config = /tmp: is a folder, not a regular file");
}

// What a C string parser would cut short, a reader that would block or
// never end, and list entries that are not there are all refused.
TEST(Config, IniFileAndValuesCannotHideOrBlock) {
  const std::string nul = temp_ini(std::string("[model]\nheads = 4\0junk\n", 23));
  // Not text: nothing of it is shown (it may be /proc/self/environ).
  EXPECT_EQ(error_of({"--config", nul}), "--config = " + nul + ": line 2: a NUL byte; not an INI text file");
  EXPECT_EQ(error_of({"--config", "/dev/zero"}), "--config = /dev/zero: is a character device, not a regular file");
  const std::string fifo = ::testing::TempDir() + "mft-config-fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of({"--config", fifo}), "--config = " + fifo + ": is a FIFO, not a regular file");
  const std::string big = temp_ini("# " + std::string(mft::kIniMaxBytes, 'x') + "\n");
  EXPECT_NE(error_of({"--config", big}).find("is larger than 1024 KiB"), std::string::npos);
  EXPECT_NE(error_of({"--readout.weights", "1,0,0,0,0,0,0,0,"}).find("empty list entry"), std::string::npos);
  EXPECT_NE(error_of({"--readout.weights", ",1,0,0,0,0,0,0,0"}).find("empty list entry"), std::string::npos);
  EXPECT_EQ(error_of({"--output.file", "--train.steps", "2"}),
            "output.file = '': needs a value (--train.steps follows it, an option); a value that starts with '-' "
            "is written --output.file=VALUE");
  for (const std::string &f : {nul, fifo, big}) std::remove(f.c_str());
}

// INI files as editors and users write them, and numbers at the ends of
// their types.
TEST(Config, IniAndNumbersAtTheirEdges) {
  const std::string edited = temp_ini("\xEF\xBB\xBF[model]\nheads = 4 ; per slice\n[output]\nfile = run#1.h5\n"
                                      "log = a;b.jsonl # the log\n[init]\nsigma_v = 1e-310\n");
  const mft::Config c = mft::parse_config({"--config", edited});
  EXPECT_EQ(c.model.heads, 4);
  EXPECT_EQ(c.output.file, "run#1.h5"); // '#' inside a value is the value's
  EXPECT_EQ(c.output.log, "a;b.jsonl");
  EXPECT_EQ(c.init.sigma_v, 1e-310); // subnormal: a number
  const std::string empty = temp_ini("[model]\nheads = 4\n[modle]\n[data]\nsequences = 9\n");
  EXPECT_EQ(error_of({"--config", empty}), "--config = " + empty + ": line 3: the section [modle] has no keys");
  const std::string long_line = temp_ini("[model]\nheads 4 " + std::string(200, 'y') + "\n");
  EXPECT_LT(error_of({"--config", long_line}).size(), long_line.size() + 150); // a bounded excerpt
  EXPECT_NE(error_of({"--model.heads", "9223372036854775808"}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of({"--init.sigma_v", "1e-400"}).find("smallest double"), std::string::npos);
  EXPECT_NE(error_of({"--init.sigma_v", "1e400"}).find("largest double"), std::string::npos);
  EXPECT_NE(error_of({"--data.file", "x.h5"}).find("read only by data.task file"), std::string::npos);
  EXPECT_NE(error_of({"--readout.kind", "query", "--readout.weights", "1,1,1,1,1,1,1,1"}).find("read only by"),
            std::string::npos);
  // The rows e_c a stored configuration holds for a coordinate readout pass.
  EXPECT_EQ(error_of({"--readout.kind", "query", "--readout.weights", "0,0,0,0,0,0,0,1"}), "");
  for (const std::string &f : {edited, empty, long_line}) std::remove(f.c_str());
}

TEST(Config, ValuesAsTablesWriteThem) {
  // Integers with a point and zeros, booleans in any case: what pandas and
  // spreadsheets write; anything else after the number stays refused.
  const mft::Config c = mft::parse_config({"--model.heads", "8.0", "--model.causal", "True", "--init.snapshot", "-2.",
                                           "--output.overwrite", "FALSE"});
  EXPECT_EQ(c.model.heads, 8);
  EXPECT_TRUE(c.model.causal);
  EXPECT_EQ(c.init.snapshot, -2);
  EXPECT_FALSE(c.output.overwrite);
  EXPECT_EQ(error_of({"--model.heads", "8.5"}), "model.heads = 8.5: not an integer");
  EXPECT_EQ(error_of({"--model.heads", "8.0;"}), "model.heads = 8.0;: not an integer");
  EXPECT_EQ(error_of({"--model.heads", ".0"}), "model.heads = .0: not an integer");
  EXPECT_EQ(error_of({"--model.causal", "Truee"}), "model.causal = Truee: must be true or false");
  const std::string glued = temp_ini("[model]\nheads = 8;\n");
  EXPECT_EQ(error_of({"--config", glued}),
            "model.heads = 8;: not an integer (" + glued + " line 2); a comment starts with ; or # after a space");
  std::remove(glued.c_str());
}

TEST(Config, UnknownKeysGetTheClosestKey) {
  EXPECT_NE(error_of({"--model.hedas", "3"}).find("did you mean model.heads?"), std::string::npos);
  EXPECT_NE(error_of({"--heads", "3"}).find("did you mean model.heads?"), std::string::npos);
  EXPECT_EQ(error_of({"--zzzz.qqqq", "3"}).find("did you mean"), std::string::npos); // nothing close
  const std::string ini = temp_ini("[train]\nstesp = 4\n");
  EXPECT_NE(error_of({"--config", ini}).find("did you mean train.steps?"), std::string::npos);
  std::remove(ini.c_str());
}

TEST(Config, ResolvedConfigurationNamesEachSectionOnce) {
  const std::string ini = mft::config_as_ini(mft::Config{});
  std::set<std::string> seen;
  std::istringstream lines(ini);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '[') EXPECT_TRUE(seen.insert(line).second) << line << " twice";
  EXPECT_GT(seen.size(), 5u);
}

TEST(Launcher, ContinuationCommandsStartAsTheRunDid) {
  EXPECT_EQ(mft::launcher_named("mpirun", true, 2), "mpirun -n 2");
  EXPECT_EQ(mft::launcher_named("mpiexec", true, 3), "mpiexec -n 3");
  EXPECT_EQ(mft::launcher_named("orted", true, 8), "mpirun -n 8"); // a rank on another node
  EXPECT_EQ(mft::launcher_named("slurmstepd", false, 4), "srun -n 4");
  EXPECT_EQ(mft::launcher_named("hydra_pmi_proxy", true, 2), "mpiexec -n 2");
  EXPECT_EQ(mft::launcher_named("bash", false, 1), ""); // started alone
  EXPECT_EQ(mft::launcher_named("bash", true, 1), "mpirun -n 1");
  EXPECT_EQ(mft::shell_word("runs/a-1.h5"), "runs/a-1.h5");
  EXPECT_EQ(mft::shell_word("my run's.h5"), "'my run'\\''s.h5'");
}

TEST(Config, OneErrorFormEverywhere) {
  EXPECT_EQ(error_of({"--model.hedas", "3"}).rfind("model.hedas = 3: unknown key", 0), 0u);
  EXPECT_EQ(error_of({"--model.heads", "2", "--model.heads", "3"}).rfind("model.heads = 3: given more than once", 0), 0u);
  EXPECT_EQ(error_of({"--model.heads"}).rfind("model.heads = '': needs a value;", 0), 0u);
  EXPECT_EQ(error_of({"stray"}).rfind("argument = stray: ", 0), 0u);
  EXPECT_EQ(error_of({"--output.overwrite", "yes"}), "output.overwrite = yes: must be true or false");
  EXPECT_EQ(error_of({"--run.max_memory", "3X"}).rfind("run.max_memory = 3X: ", 0), 0u);
  EXPECT_EQ(mft::parse_config({"--run.max_memory", "2G"}).run.max_memory, 2LL << 30);
  // Control bytes and broken UTF-8 never reach the terminal raw; UTF-8 does.
  EXPECT_EQ(mft::key_error("k", std::string("a\x01" "b\xff\n"), "x"), "k = a\\x01b\\xff\\x0a: x");
  EXPECT_EQ(mft::printable("\xce\xbb = 1"), "\xce\xbb = 1");
}

} // namespace

// A key an entry owns is read only when its entry is selected: each
// reader is a value its selector accepts, the key is refused away from its
// default under any other value (naming the entry) and taken under its own.
TEST(Config, EntryKeysAreReadOnlyWithTheirEntry) {
  int owned = 0;
  for (const auto &e : mft::config_entries(mft::Config{})) {
    const mft::KeyReaders r = mft::key_readers(e.key);
    if (r.selector.empty()) continue;
    ++owned;
    const std::vector<std::string> choices = mft::key_choices(r.selector);
    ASSERT_FALSE(r.values.empty()) << e.key;
    for (const std::string &v : r.values)
      EXPECT_NE(std::find(choices.begin(), choices.end(), v), choices.end())
          << e.key << " is read with " << r.selector << " = " << v << ", which that key does not accept";
  }
  EXPECT_GE(owned, 4); // adam's three and momentum's at least
  const std::string refused = error_of({"--train.method", "flow", "--train.beta1", "0.3"});
  EXPECT_NE(refused.find("train.beta1 = 0.3"), std::string::npos) << refused;
  EXPECT_NE(refused.find("train.method = adam"), std::string::npos) << refused;
  EXPECT_EQ(error_of({"--train.method", "adam", "--train.beta1", "0.3"}), "");
  EXPECT_EQ(error_of({"--train.method", "flow", "--train.beta1", "0.9"}), ""); // the default: nothing lost
  const std::string family = error_of({"--data.task", "gaussian", "--families.kind", "cube"});
  EXPECT_NE(family.find("data.task = families"), std::string::npos) << family;
}
