#pragma once
// The files a run reads must be regular files. A FIFO would block the open
// (or the read) until some other process writes to it, a device such as
// /dev/zero never ends, and a folder is no input at all; each is refused by
// its stat before the file is opened.
#include <string>
#include <sys/types.h>

namespace mft {

// The folder of a path ("." for a bare name, "/" for a file at the root)
// and its last component.
std::string folder_of(const std::string &path);
std::string base_name(const std::string &path);

// "a FIFO", "a folder", "a character device", ... for a stat st_mode.
std::string file_kind(mode_t mode);

// Checks that `path` (followed through symbolic links) is an existing,
// readable regular file; InputError `key = path: why` otherwise.
// Returns its size in bytes.
long long require_regular_input(const std::string &key, const std::string &path);

} // namespace mft
