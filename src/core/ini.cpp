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
  int line = 0;
  auto bad = [&](const std::string &why) {
    throw InputError(key_error(key, path, "line " + std::to_string(line) + ": " + why + ": " +
                                              printable(trim(text))));
  };
  while (std::getline(in, text)) {
    ++line;
    // A NUL would end the value for every C string parser after it.
    if (text.find('\0') != std::string::npos) bad("a NUL byte");
    std::string s = trim(text);
    if (s.empty() || s[0] == '#' || s[0] == ';') continue;
    if (s[0] == '[') {
      if (s.back() != ']') bad("a section header must end with ']'");
      section = trim(s.substr(1, s.size() - 2));
      if (!valid_name(section) || section.find('.') != std::string::npos) bad("not a section name");
      continue;
    }
    const auto eq = s.find('=');
    if (eq == std::string::npos) bad("neither '[section]' nor 'key = value'");
    const std::string name = trim(s.substr(0, eq));
    std::string value = s.substr(eq + 1);
    const auto hash = value.find('#');
    if (hash != std::string::npos) value = value.substr(0, hash);
    value = trim(value);
    if (!valid_name(name)) bad("not a key name");
    if (section.empty() && name.find('.') == std::string::npos)
      bad("a key above every [section] must be written section.key");
    entries.push_back({section.empty() ? name : section + "." + name, value, line});
  }
  return entries;
}

} // namespace mft
