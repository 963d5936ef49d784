#pragma once
// The error checks of HDF5 calls, shared by h5.cpp and h5_input.cpp.
#include "mft/core/error.hpp"

#include <hdf5.h>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace mft::h5::detail {

// "HDF5: WHAT failed (why)", why: the innermost entry of HDF5's error stack
// (where the failure was first seen), which is then cleared.
std::string failure(const std::string &what);

inline void check(herr_t status, const std::string &what) {
  if (status < 0) throw Error(failure(what));
}

inline hid_t checked(hid_t id, const std::string &what) {
  if (id < 0) throw Error(failure(what));
  return id;
}

// The file HDF5 would open first among `candidates` (its search order): the
// first that exists and is not a folder, its stat in *st. "" when none.
std::string first_existing(const std::vector<std::string> &candidates, struct stat *st);

// The link info type and calls of this HDF5 (1.12 renamed them).
#if H5_VERSION_GE(1, 12, 0)
using LinkInfo = H5L_info2_t;
constexpr auto visit_links = &H5Lvisit2;
constexpr auto link_info = &H5Lget_info2;
#else
using LinkInfo = H5L_info_t;
constexpr auto visit_links = &H5Lvisit;
constexpr auto link_info = &H5Lget_info;
#endif

// The path of an open object ("/particles/Q"), for messages.
std::string object_name(hid_t object);

} // namespace mft::h5::detail
