#pragma once
// Private to the configuration: the key table (config_keys.cpp) that
// config.cpp parses, renders and documents.
#include "mft/core/config.hpp"

#include <functional>
#include <string>
#include <vector>

namespace mft::detail {

// One configuration key: its default (as INI text), meaning, and how it is
// read into and out of Config. key_table() is the only list of keys: help,
// parsing and the /config group all come from it.
struct Key {
  const char *name;
  const char *default_text;
  const char *help;
  std::function<void(Config &, const std::string &)> set;
  std::function<ConfigValue(const Config &)> get;
};

const std::vector<Key> &key_table();

} // namespace mft::detail
