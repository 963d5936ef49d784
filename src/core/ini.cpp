#include "mft/core/ini.hpp"

#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

namespace mft {
namespace {

std::string trim(const std::string &s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool valid_name(const std::string &s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// At most `limit` characters of a line, printable: enough to find it, never
// a file's whole content (an input may be anything the user can read).
std::string excerpt(const std::string &text, size_t limit = 60) {
  return printable(text.size() > limit ? text.substr(0, limit) + "..." : text);
}

// The value of `key = value # comment`: a '#' or ';' begins a comment only
// at the start or after whitespace, so that `file = run#1.h5` keeps its name.
std::string without_comment(const std::string &value) {
  for (size_t i = 0; i < value.size(); ++i)
    if ((value[i] == '#' || value[i] == ';') && (i == 0 || value[i - 1] == ' ' || value[i - 1] == '\t'))
      return value.substr(0, i);
  return value;
}

} // namespace

std::vector<IniEntry> read_ini(const std::string &path) {
  const std::string key = "--config";
  const auto too_large = [&] {
    return InputError(key_error(key, path, "is larger than " + std::to_string(kIniMaxBytes >> 10) +
                                               " KiB; an INI file of mft keys is a few KiB"));
  };
  if (require_regular_input(key, path) > kIniMaxBytes) throw too_large();
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(key_error(key, path, "cannot open the file"));
  // At most one byte past the cap: a file that grows after its stat is
  // refused all the same.
  std::string bytes(static_cast<size_t>(kIniMaxBytes) + 1, '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (file.bad()) throw InputError(key_error(key, path, "reading the file failed"));
  bytes.resize(static_cast<size_t>(file.gcount()));
  if (static_cast<long long>(bytes.size()) > kIniMaxBytes) throw too_large();
  std::istringstream in(bytes);

  std::vector<IniEntry> entries;
  std::string section, text;
  int line = 0, section_line = 0;
  size_t section_entries = 0;
  auto bad = [&](const std::string &why) {
    throw InputError(key_error(key, path, "line " + std::to_string(line) + ": " + why + ": " + excerpt(trim(text))));
  };
  // A section without keys is a mistake (a key written under the wrong
  // header, a misspelt section): it would change nothing, silently.
  auto close_section = [&] {
    if (!section.empty() && entries.size() == section_entries)
      throw InputError(key_error(key, path, "line " + std::to_string(section_line) + ": the section [" + section +
                                                "] has no keys"));
  };
  while (std::getline(in, text)) {
    ++line;
    // A NUL would end the value for every C string parser after it; such a
    // file is not text, and none of it is shown.
    if (text.find('\0') != std::string::npos)
      throw InputError(key_error(key, path, "line " + std::to_string(line) + ": a NUL byte; not an INI text file"));
    // A byte-order mark, as some editors write at the start of a UTF-8 file.
    if (line == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    std::string s = trim(text);
    if (s.empty() || s[0] == '#' || s[0] == ';') continue;
    if (s[0] == '[') {
      if (s.back() != ']') bad("a section header must end with ']'");
      close_section();
      section = trim(s.substr(1, s.size() - 2));
      section_line = line;
      section_entries = entries.size();
      if (!valid_name(section) || section.find('.') != std::string::npos) bad("not a section name");
      continue;
    }
    const auto eq = s.find('=');
    if (eq == std::string::npos) bad("neither '[section]' nor 'key = value'");
    const std::string name = trim(s.substr(0, eq));
    const std::string value = trim(without_comment(s.substr(eq + 1)));
    if (!valid_name(name)) bad("not a key name");
    if (section.empty() && name.find('.') == std::string::npos)
      bad("a key above every [section] must be written section.key");
    entries.push_back({section.empty() ? name : section + "." + name, value, line});
  }
  close_section();
  return entries;
}

} // namespace mft
