#pragma once
// Private to the configuration: the key table (config_keys.cpp) that
// config.cpp parses, renders and documents.
#include "mft/core/config.hpp"

#include <functional>
#include <string>
#include <utility>
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
  std::vector<std::string> choices; // the values it accepts, when they are a fixed set
  // A restart may give it another value: it says how long and how a run
  // reports, not what it computes.
  bool may_change_on_restart = false;
  // Added to the mft/1 format after its first files: a file without it was
  // computed with its default.
  bool since_first_files = false;
  // Read only when the key `selector` has one of the values `readers` (the
  // keys an entry owns: read only when that entry is selected). A value
  // other than the default given to a run that would not read it is
  // refused, naming the readers (refuse_unread_keys).
  std::string selector;
  std::vector<std::string> readers;

  Key restartable() && {
    may_change_on_restart = true;
    return std::move(*this);
  }
  Key read_by(std::string key, std::vector<std::string> values) && {
    selector = std::move(key);
    readers = std::move(values);
    return std::move(*this);
  }
  // Its default is "auto", resolved when the run is set up (an initial scale
  // from the model's sizes, the adjoint's checkpoints from the memory limit).
  Key auto_by_default() && {
    default_text = "auto";
    return std::move(*this);
  }
  Key added_to_format() && {
    since_first_files = true;
    return std::move(*this);
  }
};

const std::vector<Key> &key_table();

} // namespace mft::detail
