#pragma once
// A registry's entries by the value that selects them. Each registry (score
// maps, token norms, losses, readouts, data tasks, optimisers) lists its
// entries from the build's generated lines (cmake/registries.cmake) in one
// EntryTable and looks them up here: an unknown value is refused in one line
// naming the key and the values it accepts. An entry's factory receives the
// resolved configuration section that holds its keys (ModelConfig for score
// maps and norms, LossConfig for losses, Config for readouts, tasks and
// optimisers, whose keys reach into the data), so an entry reads its own keys.
#include "mft/core/error.hpp"

#include <string>
#include <utility>
#include <vector>

namespace mft {

template <class Entry> class EntryTable {
public:
  EntryTable(std::string key, std::vector<std::pair<std::string, Entry>> entries)
      : key_(std::move(key)), entries_(std::move(entries)) {}

  // The entry selected by `value` of the table's key.
  const Entry &find(const std::string &value) const {
    for (const auto &[name, entry] : entries_)
      if (name == value) return entry;
    throw InputError(key_error(key_, value, "must be one of " + comma_list(names())));
  }

  // The values that select an entry, in registry order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &entry : entries_) out.push_back(entry.first);
    return out;
  }

  const std::vector<std::pair<std::string, Entry>> &entries() const { return entries_; }

private:
  std::string key_;
  std::vector<std::pair<std::string, Entry>> entries_;
};

} // namespace mft
