#include "mft/runs/launcher.hpp"

#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace mft {

std::string launcher_named(const std::string &parent, bool under_mpi, int ranks) {
  std::string name;
  if (parent == "mpirun" || parent == "mpiexec" || parent == "orterun" || parent == "prterun")
    name = parent;
  else if (parent == "orted" || parent == "prted" || parent == "prte")
    name = "mpirun"; // a rank on a node of a job that mpirun started elsewhere
  else if (parent == "hydra_pmi_proxy")
    name = "mpiexec"; // MPICH
  else if (parent == "slurmstepd")
    name = "srun";
  else if (under_mpi || ranks > 1)
    name = "mpirun";
  if (name.empty()) return "";
  return name + " -n " + std::to_string(ranks);
}

std::string launcher_prefix(int ranks) {
  std::string parent;
  std::ifstream comm("/proc/" + std::to_string(getppid()) + "/comm");
  if (comm) std::getline(comm, parent);
  const bool under_mpi =
      std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
  return launcher_named(parent, under_mpi, ranks);
}

} // namespace mft

namespace mft {

std::string shell_word(const std::string &word) {
  const bool plain = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_./=:+-,@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

} // namespace mft
