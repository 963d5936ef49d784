#pragma once
// Private to the configuration: the key table (config_keys.cpp) that
// config.cpp parses, renders and documents.
#include "mft/core/config.hpp"

#include <functional>
#include <string>
#include <vector>

namespace mft::detail {

// One configuration key: its name, default (as INI text, rendered from a
// default-constructed Config), meaning, and how it is read into and out of
// Config. key_table() is the only list of keys: help, parsing and the /config
// group all come from it, and each key is written there once.
struct Key {
  std::string name;
  std::string default_text;
  std::string help;
  std::function<void(Config &, const std::string &)> set;
  std::function<ConfigValue(const Config &)> get;
};

const std::vector<Key> &key_table();

} // namespace mft::detail
