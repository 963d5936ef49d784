// Configuration: defaults, INI file, command-line precedence, and errors that
// name the key and the value.
#include "mft/config.hpp"
#include "mft/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

std::string temp_ini(const std::string &text) {
  char name[] = "/tmp/mft-test-XXXXXX";
  const int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

// The InputError message of parse_config(args), or "" if it parsed.
std::string error_of(const std::vector<std::string> &args) {
  try {
    mft::parse_config(args);
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

} // namespace
