#include "mft/io/petsc_outputs.hpp"

#include "mft/core/error.hpp"
#include "mft/core/ini.hpp"
#include "mft/core/input_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace mft {
namespace {

bool ends_with(const std::string &s, const std::string &end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

bool is_false(const std::string &v) {
  for (const char *word : {"0", "false", "no", "off", "FALSE"})
    if (v == word) return true;
  return false;
}

bool is_logical(const std::string &v) {
  for (const char *word : {"1", "true", "yes", "on", "TRUE"})
    if (v == word) return true;
  return is_false(v);
}

std::vector<std::string> fields_of(const std::string &value) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = value.find(':', start)) != std::string::npos; start = at + 1)
    out.push_back(value.substr(start, at - start));
  out.push_back(value.substr(start));
  return out;
}

// Viewer types whose second field is a file name (draw's is a draw type,
// socket's a port, saws' a communicator, glvis' a host).
bool writes_a_named_file(const std::string &type) {
  for (const char *t : {"", "ascii", "binary", "hdf5", "vtk", "matlab", "adios", "exodusii", "vu", "cgns"})
    if (type == t) return true;
  return false;
}

// The path of `path`'s folder made absolute, with its last component: two
// names of one file that may not exist yet compare equal.
std::string canonical_target(const std::string &path) {
  char *real = realpath(folder_of(path).c_str(), nullptr);
  if (!real) return path;
  const std::string out = std::string(real) + "/" + base_name(path);
  std::free(real);
  return out;
}

bool is_hdf5_file(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "rb"); // a regular file (checked first): no blocking
  if (!f) return false;
  char head[8] = {};
  const size_t got = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return got == sizeof head && std::memcmp(head, "\211HDF\r\n\032\n", sizeof head) == 0;
}

void add_file(InputFiles &files, const std::string &key, const std::string &path) {
  if (!path.empty()) files.push_back({key, path});
}

bool names_files(const std::string &key) { return ends_with(key, ".file") || ends_with(key, ".log"); }

bool existing_file(const std::string &path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

std::vector<PetscOutput> petsc_outputs(const PetscOption &option, int rank) {
  const auto &[name, value] = option;
  const std::string r = std::to_string(rank);
  if (name == "history") {
    if (value.empty() || rank != 0) return {};
    return {{value, true}};
  }
  if (name == "log_trace") {
    if (value.empty()) return {};
    return {{value + "." + r, true, false, value}};
  }
  if (name == "info") {
    const std::string file = value.substr(0, value.find(':'));
    if (file.empty()) return {};
    return {{file + "." + r, true, false, file}};
  }
  if (name == "malloc_view") {
    if (value.empty() || is_logical(value)) return {};
    return {{value + "_" + r, false, false, value}};
  }
  if (name == "log_all") {
    if (rank != 0 || is_false(value)) return {};
    return {{"Log.0"}};
  }
  if (name == "viewer_binary_filename") {
    if (value.empty()) return {};
    return {{value}, {value + ".info"}};
  }
  if (ends_with(name, "_vtk")) { // a file name pattern (filename-%03d.vts): judged as it is written
    if (value.empty()) return {};
    return {{value}};
  }
  const std::vector<std::string> fields = fields_of(value);
  const std::string &type = fields[0];
  if (value == "binary") return {{"binaryoutput"}, {"binaryoutput.info"}};
  if (fields.size() < 2 || !writes_a_named_file(type)) return {};
  std::string file = fields[1];
  if (file.empty() && type == "binary") file = "binaryoutput";
  if (file.empty() || ((type.empty() || type == "ascii") && (file == "stdout" || file == "stderr"))) return {};
  std::vector<PetscOutput> out{{file, false, type == "hdf5"}};
  if (type == "binary") out.push_back({file + ".info"});
  return out;
}

InputFiles files_named_by(const std::vector<std::string> &mft_words) {
  InputFiles files;
  for (size_t i = 0; i < mft_words.size(); ++i) {
    const std::string &word = mft_words[i];
    if (word.rfind("--", 0) != 0) continue;
    const size_t eq = word.find('=');
    const std::string key = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::string value;
    if (eq != std::string::npos)
      value = word.substr(eq + 1);
    else if (i + 1 < mft_words.size() && mft_words[i + 1].rfind("--", 0) != 0)
      value = mft_words[++i];
    if (key == "config" && existing_file(value)) {
      add_file(files, "--config", value);
      try {
        for (const IniEntry &e : read_ini(value))
          if (names_files(e.key) || existing_file(e.value)) add_file(files, e.key, e.value);
      } catch (const Error &) { // parse_config says what is wrong with it
      }
    } else if (key == "restart" || key == "from" || key == "config") {
      add_file(files, "--" + key, value);
    } else if (names_files(key) || existing_file(value)) {
      add_file(files, key, value);
    }
  }
  return files;
}

std::vector<std::string> check_petsc_outputs(const std::vector<PetscOption> &options, int rank,
                                             const InputFiles &files, bool before_start) {
  // One file by two names, or a name of a file yet to be made.
  const auto is = [](const std::string &a, const std::string &b) {
    return same_file(a, b) || canonical_target(a) == canonical_target(b);
  };
  std::vector<std::string> at_start;
  for (const PetscOption &option : options) {
    const std::string key = "-" + option.first, &value = option.second;
    for (const PetscOutput &output : petsc_outputs(option, rank)) {
      const std::string &path = output.path;
      const std::string named = path == value ? path : "it writes " + path + ", which";
      const std::string as = path == value ? path + " is a file" : named;
      for (const auto &[file_key, file] : files) {
        if (file.empty()) continue;
        if (is(path, file))
          throw InputError(key_error(key, value,
                                     as + " mft reads or writes as " + file_key +
                                         "; PETSc's outputs go to files of their own"));
        if (!output.stem.empty() && is(output.stem, file))
          throw InputError(key_error(key, value,
                                     output.stem + " is a file mft reads or writes as " + file_key + " (PETSc would write " +
                                         path + " beside it); PETSc's outputs go to files of their own"));
      }
      struct stat st {};
      if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && stat(path.c_str(), &st) != 0)
        throw InputError(key_error(key, value, named + " is a symbolic link to nothing"));
      if (stat(folder_of(path).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw InputError(key_error(key, value, "the folder of " + path + " does not exist"));
      if (stat(path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode))
          throw InputError(key_error(key, value,
                                     named + " is " + file_kind(st.st_mode) +
                                         ", not a regular file; PETSc's outputs go to regular files or new ones"));
        if (before_start && !output.hdf5 && is_hdf5_file(path))
          throw InputError(key_error(key, value,
                                     named + " is an HDF5 file (a run file, or data a configuration may "
                                             "name): PETSc would write over it; name a new file"));
      } else if (errno != ENOENT) {
        throw InputError(key_error(key, value, std::string("cannot use the name ") + path + ": " +
                                                   std::strerror(errno)));
      }
      if (output.at_start) at_start.push_back(path);
    }
  }
  return at_start;
}

} // namespace mft
