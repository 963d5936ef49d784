#pragma once
// The INI files of --config: `[section]` headers, `key = value` lines, and
// comments (`#` or `;` at the start of a line, `#` after a value). A key is
// named `section.key`; a line above every header must name `section.key`.
#include <string>
#include <vector>

namespace mft {

// The largest INI file read (a configuration is a few KiB).
constexpr long long kIniMaxBytes = 1 << 20;

struct IniEntry {
  std::string key;   // section.key
  std::string value; // trimmed; may be empty
  int line = 0;      // 1-based line number in the file
};

// Reads every entry of `path` in file order. Throws InputError of the form
// `--config = PATH: why` for a file that cannot be read (missing,
// unreadable, not a regular file: a folder, a FIFO, a device), one larger
// than kIniMaxBytes, and for a line that holds a NUL byte or is neither a
// header, an entry nor a comment (naming the line number and the line,
// escaped).
std::vector<IniEntry> read_ini(const std::string &path);

} // namespace mft
