#include "mft/error.hpp"

#include <vector>

namespace mft {

void collectively(MPI_Comm comm, const std::function<void()> &f) {
  // kind: 0 = fine, 1 = run error, 2 = input error.
  int kind = 0;
  std::string message;
  try {
    f();
  } catch (const InputError &e) {
    kind = 2;
    message = e.what();
  } catch (const std::exception &e) {
    kind = 1;
    message = e.what();
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Lowest failing rank: encode as rank (fail) or size (fine), reduce by MIN.
  int mine = kind ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int len = static_cast<int>(message.size());
  int header[2] = {kind, len};
  MPI_Bcast(header, 2, MPI_INT, first, comm);
  std::vector<char> text(message.begin(), message.end());
  text.resize(static_cast<size_t>(header[1]));
  MPI_Bcast(text.data(), header[1], MPI_CHAR, first, comm);
  std::string shared(text.begin(), text.end());
  if (header[0] == 2) throw InputError(shared);
  throw Error(shared);
}

std::string key_error(const std::string &key, const std::string &value, const std::string &why) {
  return key + " = " + (value.empty() ? std::string("''") : value) + ": " + why;
}

} // namespace mft
