#include "mft/core/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mft {

void collectively(MPI_Comm comm, const std::function<void()> &f) {
  // kind: 0 = fine, 1 = run error, 2 = input error, 3 = divergence.
  int kind = 0;
  std::string message;
  try {
    f();
  } catch (const InputError &e) {
    kind = 2;
    message = e.what();
  } catch (const DivergedError &e) {
    kind = 3;
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
  if (header[0] == 3) throw DivergedError(shared);
  throw Error(shared);
}

void abort_job(const std::string &message) {
  std::fprintf(stderr, "mft: error: %s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1); // MPI_Abort does not return; should it, this rank ends all the same
}

std::string key_error(const std::string &key, const std::string &value, const std::string &why) {
  return printable(key) + " = " + (value.empty() ? std::string("''") : printable(value)) + ": " + why;
}

std::string comma_list(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string printable(const std::string &text) {
  std::string out;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    // Length of a well-formed UTF-8 sequence starting here (0: not one).
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len > 1 && (c == 0xC0 || c == 0xC1)) len = 0; // overlong forms
    for (size_t k = 1; k < len; ++k)
      if (i + k >= text.size() || (byte(i + k) >> 6) != 0x2) len = 0;
    if (len == 1 && (c < 0x20 || c == 0x7f)) len = 0;
    if (len == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

} // namespace mft
