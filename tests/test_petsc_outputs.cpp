// The files PETSc's options write, as mft reads them (petsc_outputs.hpp),
// and the options as PETSc will see them (petsc_options_of): the table of
// which option writes which file on which rank, checked against what PETSc
// 3.18 was seen to write.
#include "mft/core/error.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/io/petsc_outputs.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::vector<std::string> paths(const std::string &name, const std::string &value, int rank) {
  std::vector<std::string> out;
  for (const mft::PetscOutput &o : mft::petsc_outputs({name, value}, rank)) out.push_back(o.path);
  return out;
}

using Paths = std::vector<std::string>;

TEST(PetscOutputs, ViewersWriteTheirNamedFile) {
  EXPECT_EQ(paths("log_view", ":lv.txt", 0), Paths{"lv.txt"});
  EXPECT_EQ(paths("log_view", "ascii:lv.xml:ascii_xml", 1), Paths{"lv.xml"});
  EXPECT_EQ(paths("depth_ts_monitor", "ascii:m.txt::append", 0), Paths{"m.txt"});
  EXPECT_EQ(paths("depth_ts_view", "binary:v.bin", 0), (Paths{"v.bin", "v.bin.info"}));
  EXPECT_EQ(paths("depth_ts_view", "binary", 0), (Paths{"binaryoutput", "binaryoutput.info"}));
  EXPECT_EQ(paths("depth_ts_view", "binary:", 0), (Paths{"binaryoutput", "binaryoutput.info"}));
  EXPECT_EQ(paths("train_ts_monitor", "hdf5:m.h5", 0), Paths{"m.h5"});
  EXPECT_TRUE(mft::petsc_outputs({"train_ts_monitor", "hdf5:m.h5"}, 0)[0].hdf5);
  EXPECT_EQ(paths("depth_ksp_compute_eigenvalues", "ascii:e.txt", 0), Paths{"e.txt"});
}

TEST(PetscOutputs, StreamsAndOtherViewersWriteNoFile) {
  for (const char *value : {"", "ascii", "ascii:stdout", ":stderr", "draw", "draw:x:f.ppm", "socket:5005",
                            "saws:c", "glvis:host"})
    EXPECT_EQ(paths("depth_ts_monitor", value, 0), Paths{}) << value;
  EXPECT_EQ(paths("depth_ts_rk_type", "4", 0), Paths{});
}

TEST(PetscOutputs, StartUpFilesAndRankSuffixes) {
  EXPECT_EQ(paths("history", "h.txt", 0), Paths{"h.txt"});
  EXPECT_EQ(paths("history", "h.txt", 1), Paths{}); // rank 0 writes it
  EXPECT_TRUE(mft::petsc_outputs({"history", "h.txt"}, 0)[0].at_start);
  EXPECT_EQ(paths("log_trace", "t", 3), Paths{"t.3"});
  EXPECT_EQ(paths("log_trace", "", 0), Paths{}); // standard output
  EXPECT_EQ(paths("info", "inf:sys", 2), Paths{"inf.2"});
  EXPECT_EQ(paths("info", ":sys", 0), Paths{});
  EXPECT_EQ(paths("malloc_view", "mv", 1), Paths{"mv_1"});
  EXPECT_EQ(paths("malloc_view", "true", 0), Paths{});
  EXPECT_EQ(paths("log_all", "", 0), Paths{"Log.0"});
  EXPECT_EQ(paths("log_all", "", 1), Paths{});
  EXPECT_EQ(paths("log_all", "false", 0), Paths{});
  EXPECT_EQ(paths("viewer_binary_filename", "b", 0), (Paths{"b", "b.info"}));
  EXPECT_EQ(paths("depth_ts_monitor_solution_vtk", "s-%03d.vts", 0), Paths{"s-%03d.vts"});
}

TEST(PetscOutputs, AnOutputOntoARunFileIsRefusedByEveryName) {
  char folder[] = "/tmp/mft-petsc-outputs-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string dir = folder, ini = dir + "/run.ini";
  std::ofstream(ini) << "[model]\nheads = 4\n";
  ASSERT_EQ(symlink("run.ini", (dir + "/link").c_str()), 0);
  const mft::InputFiles files{{"--config", ini}, {"output.file", dir + "/new.h5"}};
  auto refused = [&](const std::string &name, const std::string &value) {
    try {
      mft::check_petsc_outputs({{name, value}}, 0, files, false);
    } catch (const mft::InputError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("depth_ts_monitor", "ascii:" + ini).find("--config"), std::string::npos);
  EXPECT_NE(refused("log_view", ":" + dir + "/link").find("--config"), std::string::npos);
  EXPECT_NE(refused("log_view", ":" + dir + "/../" + dir.substr(5) + "/new.h5").find("output.file"),
            std::string::npos); // a file yet to be made, by another name
  EXPECT_NE(refused("log_trace", dir + "/run.ini").find("beside it"), std::string::npos); // run.ini.0
  EXPECT_NE(refused("malloc_view", ini).find("--config"), std::string::npos);              // run.ini_0
  EXPECT_EQ(refused("log_trace", dir + "/trace"), "");
  EXPECT_NE(refused("log_view", ":" + dir + "/no/such").find("does not exist"), std::string::npos);
  EXPECT_NE(refused("log_view", ":" + dir).find("folder"), std::string::npos);
  EXPECT_EQ(refused("log_view", ":" + dir + "/log.txt"), "");
  EXPECT_EQ(refused("depth_ts_view", "binary:" + dir + "/v.bin"), "");
  unlink((dir + "/link").c_str());
  unlink(ini.c_str());
  rmdir(folder);
}

TEST(PetscOptionsOf, ReadsFilesInPlaceAndTheEnvironment) {
  char folder[] = "/tmp/mft-petsc-options-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string dir = folder, a = dir + "/a.opts", b = dir + "/b.opts";
  std::ofstream(a) << "-depth_ts_monitor ascii:m.txt # a comment -log_view :x\n-options_file " << b << "\n";
  std::ofstream(b) << "-train_ts_dt -0.5\n-log_view\n";
  setenv("PETSC_OPTIONS", "-history h.txt", 1);
  std::vector<std::string> files;
  const auto options = mft::petsc_options_of({"-options_file", a, "-info", "inf"}, &files);
  unsetenv("PETSC_OPTIONS");
  const std::vector<mft::PetscOption> expected{{"history", "h.txt"},
                                               {"depth_ts_monitor", "ascii:m.txt"},
                                               {"train_ts_dt", "-0.5"},
                                               {"log_view", ""},
                                               {"info", "inf"}};
  EXPECT_EQ(options, expected);
  EXPECT_EQ(files, (std::vector<std::string>{a, b}));
  std::ofstream(b) << "-options_file " << a << "\n"; // a -> b -> a
  EXPECT_THROW(mft::petsc_options_of({"-options_file", a}), mft::InputError);
  unlink(a.c_str());
  unlink(b.c_str());
  rmdir(folder);
}

} // namespace
