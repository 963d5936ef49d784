#pragma once
// How this job was started, so that the command mft prints to continue a
// stopped run starts it the same way: the same launcher and rank count give
// the same numbers bit for bit (another rank count agrees to rounding only).
#include <string>

namespace mft {

// The launcher's name as a command prefix with the rank count ("mpirun -n
// 2", "srun -n 2", "mpiexec -n 4"), or "" for one process started alone.
// Read from the parent process (mpirun, mpiexec, Open MPI's and PRRTE's
// daemons, Slurm's slurmstepd, MPICH's hydra proxy); the environment of an
// MPI launcher when the parent is none of them; "mpirun" when nothing says
// more and there are several ranks.
std::string launcher_prefix(int ranks);

// The launcher named by a parent process called `parent` (its
// /proc/PID/comm), with `under_mpi` telling whether the environment is an
// MPI launcher's; "" for none. Exposed for tests.
std::string launcher_named(const std::string &parent, bool under_mpi, int ranks);

} // namespace mft

namespace mft {

// `word` as one word of a POSIX shell command: as it is when it holds only
// characters no shell treats specially, else in single quotes.
std::string shell_word(const std::string &word);

} // namespace mft
