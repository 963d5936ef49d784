// The reading side of h5.hpp: input files opened read-only, checked before
// they are read (regular files, external links to regular files), and the
// shapes, values and attributes of what they hold.
#include "mft/io/h5.hpp"

#include "h5_check.hpp"
#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace mft::h5 {

using detail::check;
using detail::checked;
using detail::object_name;

namespace detail {

std::string first_existing(const std::vector<std::string> &candidates, struct stat *st) {
  for (const std::string &candidate : candidates)
    if (stat(candidate.c_str(), st) == 0 && !S_ISDIR(st->st_mode)) return candidate;
  return "";
}

} // namespace detail

namespace {

using detail::first_existing;
using detail::LinkInfo;
using detail::visit_links;

// The files HDF5 tries, in its order, for the external link target `target`
// of a link in the file `parent`: for a relative name, under each folder of
// HDF5_EXT_PREFIX, beside the parent file, then as given (from the working
// folder); for an absolute name, as given, then its base name in those places.
std::vector<std::string> link_target_candidates(const std::string &parent, const std::string &target) {
  const bool absolute = !target.empty() && target[0] == '/';
  const std::string name = absolute ? base_name(target) : target;
  std::vector<std::string> out;
  if (absolute) out.push_back(target);
  if (const char *prefixes = std::getenv("HDF5_EXT_PREFIX")) {
    std::string list = prefixes;
    for (size_t begin = 0; begin <= list.size();) {
      const size_t colon = std::min(list.find(':', begin), list.size());
      if (colon > begin) out.push_back(list.substr(begin, colon - begin) + "/" + name);
      begin = colon + 1;
    }
  }
  out.push_back(folder_of(parent) + "/" + name);
  out.push_back(name);
  return out;
}


// (link path, target file) of every external link of an open file.
std::vector<std::pair<std::string, std::string>> external_links(hid_t file) {
  std::vector<std::pair<std::string, std::string>> out;
  // No exception may cross HDF5's C frames: the callback only collects.
  const auto collect = [](hid_t group, const char *name, const LinkInfo *info, void *data) -> herr_t {
    if (info->type != H5L_TYPE_EXTERNAL) return 0;
    std::vector<char> value(info->u.val_size + 1, '\0');
    if (H5Lget_val(group, name, value.data(), info->u.val_size, H5P_DEFAULT) < 0) return 0;
    const char *target = nullptr, *object = nullptr;
    if (H5Lunpack_elink_val(value.data(), info->u.val_size, nullptr, &target, &object) < 0 || !target) return 0;
    static_cast<std::vector<std::pair<std::string, std::string>> *>(data)->emplace_back(
        std::string(name[0] == '/' ? "" : "/") + name, target);
    return 0;
  };
  visit_links(file, H5_INDEX_NAME, H5_ITER_INC, collect, &out);
  H5Eclear2(H5E_DEFAULT);
  return out;
}

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator<(const FileId &o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

// Every external link of `file` (reached from the input `top`) must lead to
// a regular file: HDF5 opens its target when a path through it is read, and
// a FIFO there would block that open. The files linked to are checked in
// turn, each once.
void check_external_links(hid_t file, const std::string &name, const std::string &key, const std::string &top,
                          std::set<FileId> &seen) {
  for (const auto &[link, target] : external_links(file)) {
    std::vector<std::string> candidates = link_target_candidates(name, target);
    while (!candidates.empty()) {
      struct stat st {};
      const std::string candidate = first_existing(candidates, &st);
      if (candidate.empty()) break;
      if (!S_ISREG(st.st_mode))
        throw InputError(key_error(key, top,
                                   "the external link " + link + " leads to " + candidate + ", which is " +
                                       file_kind(st.st_mode) + ", not a regular file"));
      Handle next(H5Fopen(candidate.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
      if (next.valid()) {
        if (seen.insert({st.st_dev, st.st_ino}).second) check_external_links(next, candidate, key, top, seen);
        break;
      }
      // Not HDF5: HDF5 goes on to the next candidate, and so does the check.
      candidates.erase(candidates.begin(), std::find(candidates.begin(), candidates.end(), candidate) + 1);
    }
  }
  H5Eclear2(H5E_DEFAULT);
}

} // namespace

Handle open_input(const std::string &path, const std::string &key) {
  silence_errors();
  require_regular_input(key, path);
#if H5_VERSION_GE(1, 12, 0)
  const htri_t hdf5 = H5Fis_accessible(path.c_str(), H5P_DEFAULT);
#else
  const htri_t hdf5 = H5Fis_hdf5(path.c_str());
#endif
  if (hdf5 <= 0) throw InputError(key_error(key, path, "not an HDF5 file"));
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw InputError(key_error(key, path, "HDF5 cannot open the file"));
  Handle file(f);
  std::set<FileId> seen;
  check_external_links(file, path, key, path, seen);
  return file;
}

std::vector<hsize_t> dataset_shape(hid_t file, const std::string &path) {
  Handle ds(checked(H5Dopen2(file, path.c_str(), H5P_DEFAULT), "opening " + path));
  Handle space(checked(H5Dget_space(ds), "H5Dget_space " + path));
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw Error("HDF5: reading the shape of " + path + " failed");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

std::vector<double> read_doubles(hid_t file, const std::string &path) {
  Handle ds(checked(H5Dopen2(file, path.c_str(), H5P_DEFAULT), "opening " + path));
  Handle type(checked(H5Dget_type(ds), "H5Dget_type " + path));
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) throw Error(path + " is not numeric");
  Handle space(checked(H5Dget_space(ds), "H5Dget_space " + path));
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  std::vector<double> out(static_cast<size_t>(count));
  if (count > 0)
    check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
          "reading " + path);
  return out;
}

AttributeClass attribute_class(hid_t obj, const std::string &name) {
  Handle a(checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "opening attribute " + name));
  Handle type(checked(H5Aget_type(a), "H5Aget_type"));
  switch (H5Tget_class(type)) {
  case H5T_STRING: return AttributeClass::String;
  case H5T_INTEGER: return AttributeClass::Integer;
  case H5T_FLOAT: return AttributeClass::Float;
  default: return AttributeClass::Other;
  }
}

namespace {

// Refuses an attribute that holds other than one value: a reader of one
// value must never read more into it.
void require_scalar(hid_t attribute, const std::string &name) {
  Handle space(checked(H5Aget_space(attribute), "H5Aget_space"));
  if (H5Sget_simple_extent_type(space) == H5S_SCALAR) return;
  const int rank = H5Sget_simple_extent_ndims(space);
  std::string shape = "(";
  if (rank > 0) {
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    for (size_t i = 0; i < dims.size(); ++i) shape += (i ? ", " : "") + std::to_string(dims[i]);
  }
  throw Error("the attribute " + printable(name) + " holds " + (rank <= 0 ? "no value" : "shape " + shape + (rank == 1 ? ",)" : ")")) +
              ", not one value");
}

} // namespace

std::string read_string_attribute(hid_t obj, const std::string &name) {
  Handle a(checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "opening attribute " + name));
  Handle type(checked(H5Aget_type(a), "H5Aget_type"));
  if (H5Tget_class(type) != H5T_STRING) throw Error("the attribute " + printable(name) + " is not a string");
  require_scalar(a, name);
  if (H5Tis_variable_str(type) > 0) {
    Handle mem(checked(H5Tcopy(type), "H5Tcopy")); // same character set as stored
    char *text = nullptr;
    check(H5Aread(a, mem, &text), "reading attribute " + name);
    std::string out = text ? text : "";
    Handle space(checked(H5Aget_space(a), "H5Aget_space"));
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem, space, H5P_DEFAULT, &text);
#else
    H5Dvlen_reclaim(mem, space, H5P_DEFAULT, &text);
#endif
    return out;
  }
  const size_t size = H5Tget_size(type);
  if (size > (1u << 20)) throw Error("the attribute " + printable(name) + " is a string of " + std::to_string(size) + " bytes");
  std::string out(size, '\0');
  check(H5Aread(a, type, out.data()), "reading attribute " + name);
  return out.substr(0, out.find('\0'));
}

long long read_integer_attribute(hid_t obj, const std::string &name) {
  Handle a(checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "opening attribute " + name));
  Handle type(checked(H5Aget_type(a), "H5Aget_type"));
  // A uint64 above the largest int64 would be clipped by the conversion.
  if (H5Tget_class(type) != H5T_INTEGER || H5Tget_size(type) > 8 ||
      (H5Tget_size(type) == 8 && H5Tget_sign(type) == H5T_SGN_NONE))
    throw Error("the attribute " + printable(name) + " is not an integer of at most 64 bits (signed)");
  require_scalar(a, name);
  long long v = 0;
  check(H5Aread(a, H5T_NATIVE_LLONG, &v), "reading attribute " + name);
  return v;
}

std::vector<double> read_float_attribute(hid_t obj, const std::string &name) {
  Handle a(checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "opening attribute " + name));
  Handle space(checked(H5Aget_space(a), "H5Aget_space"));
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  std::vector<double> v(static_cast<size_t>(std::max<hssize_t>(n, 0)));
  if (!v.empty()) check(H5Aread(a, H5T_NATIVE_DOUBLE, v.data()), "reading attribute " + name);
  return v;
}

namespace {

// The `count` names that name_at(i, buffer, size) gives, in name order
// (asked for their length first: names have no length limit).
template <class NameAt>
std::vector<std::string> names_by_index(hsize_t count, NameAt name_at) {
  std::vector<std::string> names;
  for (hsize_t i = 0; i < count; ++i) {
    const auto length = name_at(i, nullptr, 0);
    if (length <= 0) continue;
    std::string name(static_cast<size_t>(length) + 1, '\0');
    if (name_at(i, name.data(), name.size()) > 0) names.emplace_back(name.c_str());
  }
  return names;
}

} // namespace

std::vector<std::string> attribute_names(hid_t obj) {
  // The object-info calls took a fields argument in 1.10.3 and a new info
  // struct in 1.12; the unnumbered names map to the newest.
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  check(H5Oget_info3(obj, &info, H5O_INFO_NUM_ATTRS), "H5Oget_info");
#else
  H5O_info_t info;
  check(H5Oget_info2(obj, &info, H5O_INFO_NUM_ATTRS), "H5Oget_info");
#endif
  return names_by_index(info.num_attrs, [&](hsize_t i, char *name, size_t size) {
    return H5Aget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, size, H5P_DEFAULT);
  });
}

std::vector<std::string> member_names(hid_t group) {
  H5G_info_t info;
  check(H5Gget_info(group, &info), "H5Gget_info");
  return names_by_index(info.nlinks, [&](hsize_t i, char *name, size_t size) {
    return H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, size, H5P_DEFAULT);
  });
}

void read_block(hid_t dataset, const std::vector<hsize_t> &start, const std::vector<hsize_t> &count,
                hid_t mem_type, void *data, bool collective) {
  Handle file_space(checked(H5Dget_space(dataset), "H5Dget_space"));
  hsize_t elements = 1;
  for (hsize_t c : count) elements *= c;
  const hsize_t one = 1;
  Handle mem_space(checked(H5Screate_simple(1, elements ? &elements : &one, nullptr), "H5Screate_simple"));
  if (elements == 0) {
    check(H5Sselect_none(file_space), "H5Sselect_none");
    check(H5Sselect_none(mem_space), "H5Sselect_none");
  } else {
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
          "H5Sselect_hyperslab");
  }
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
  if (collective) check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  check(H5Dread(dataset, mem_type, mem_space, file_space, dxpl, elements ? data : nullptr),
        "reading " + object_name(dataset));
}

} // namespace mft::h5
