#include "mft/core/ini.hpp"

#include "mft/core/error.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

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
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw InputError(key_error(key, path, std::string("cannot open the file: ") + std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(key_error(key, path, "is a folder, not an INI file"));
  std::ifstream in(path);
  if (!in) throw InputError(key_error(key, path, "cannot open the file"));

  std::vector<IniEntry> entries;
  std::string section, text;
  int line = 0;
  auto bad = [&](const std::string &why) {
    throw InputError(key_error(key, path, "line " + std::to_string(line) + ": " + why + ": " +
                                              printable(trim(text))));
  };
  while (std::getline(in, text)) {
    ++line;
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
  if (in.bad()) throw InputError(key_error(key, path, "reading the file failed"));
  return entries;
}

} // namespace mft
