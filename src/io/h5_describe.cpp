// What an input file holds, judged before a value is read: how an object
// is reached (link classes), its element type, shape and layout, and where
// its values are stored. Nothing here fails: a description says what is
// wrong, and the reader that needs the object refuses it in one line.
#include "mft/io/h5.hpp"

#include "h5_check.hpp"
#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

namespace mft::h5 {

using detail::first_existing;
using detail::link_info;
using detail::LinkInfo;

namespace {

// Where a dataset of the file `file` keeps values outside it (external raw
// storage, the sources of a virtual dataset): a phrase naming the first
// such file and what it is, or "".
std::string storage_outside(hid_t file, hid_t dcpl) {
  char own[4096] = "";
  H5Fget_name(file, own, sizeof own);
  const auto place = [&](const std::string &name) {
    std::vector<std::string> candidates;
    if (!name.empty() && name != "." && name[0] != '/') candidates.push_back(folder_of(own) + "/" + name);
    candidates.push_back(name.empty() || name == "." ? std::string(own) : name);
    struct stat st {};
    const std::string found = first_existing(candidates, &st);
    if (found.empty()) return printable(name) + ", which does not exist";
    return printable(found) + (S_ISREG(st.st_mode) ? "" : ", " + file_kind(st.st_mode));
  };
  const int external = H5Pget_external_count(dcpl);
  if (external > 0) {
    char name[4096] = "";
    off_t offset = 0;
    hsize_t size = 0;
    H5Pget_external(dcpl, 0, sizeof name, name, &offset, &size);
    return "keeps its data in " + place(name) + " (external storage)";
  }
  size_t sources = 0;
  if (H5Pget_layout(dcpl) == H5D_VIRTUAL && H5Pget_virtual_count(dcpl, &sources) >= 0) {
    for (size_t i = 0; i < sources; ++i) {
      char name[4096] = "";
      if (H5Pget_virtual_filename(dcpl, i, name, sizeof name) >= 0)
        return "takes its data from " + place(name) + " (a virtual dataset)";
    }
    return "is a virtual dataset";
  }
  return "";
}

// "float64", "float32 (big-endian)", "int32", "uint64", "string", ...
std::string type_name(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::string bits = std::to_string(8 * H5Tget_size(type));
  const std::string order = H5Tget_order(type) == H5T_ORDER_BE ? " (big-endian)" : "";
  switch (cls) {
  case H5T_FLOAT: return "float" + bits + order;
  case H5T_INTEGER: return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits + order;
  case H5T_STRING: return "string";
  case H5T_COMPOUND: return "compound";
  case H5T_ENUM: return "enum";
  case H5T_ARRAY: return "array";
  case H5T_VLEN: return "variable-length sequence";
  case H5T_REFERENCE: return "reference";
  case H5T_OPAQUE: return "opaque";
  case H5T_BITFIELD: return "bitfield";
  default: return "unknown";
  }
}

} // namespace

bool exists(hid_t file, const std::string &path) {
  // Check each component, as H5Lexists requires.
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = path.find('/', pos + 1);
    prefix = path.substr(0, next);
    if (!prefix.empty() && prefix != "/" && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0)
      return false;
    pos = next;
  }
  return true;
}

std::string non_hard_link(hid_t file, const std::string &path) {
  for (size_t next = path.find('/', 1);; next = path.find('/', next + 1)) {
    const std::string prefix = path.substr(0, next);
    LinkInfo info;
    if (prefix.size() > 1 && link_info(file, prefix.c_str(), &info, H5P_DEFAULT) >= 0 &&
        info.type != H5L_TYPE_HARD) {
      std::vector<char> value(info.u.val_size + 1, '\0');
      std::string where;
      if (H5Lget_val(file, prefix.c_str(), value.data(), info.u.val_size, H5P_DEFAULT) >= 0) {
        const char *target = nullptr, *object = nullptr;
        if (info.type == H5L_TYPE_SOFT)
          where = " to " + printable(value.data());
        else if (info.type == H5L_TYPE_EXTERNAL &&
                 H5Lunpack_elink_val(value.data(), info.u.val_size, nullptr, &target, &object) >= 0)
          where = " to " + printable(target ? target : "") + ":" + printable(object ? object : "");
      }
      H5Eclear2(H5E_DEFAULT);
      const std::string kind = info.type == H5L_TYPE_SOFT       ? "a soft link"
                               : info.type == H5L_TYPE_EXTERNAL ? "an external link"
                                                                : "a user-defined link";
      return prefix + " is " + kind + where;
    }
    H5Eclear2(H5E_DEFAULT);
    if (next == std::string::npos) return "";
  }
}

std::string DatasetInfo::shape_text() const {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::string DatasetInfo::unreadable(const std::string &name) const {
  if (!exists) return "has no " + name;
  if (!is_dataset) return name + " is not a dataset";
  if (!numeric()) return name + " is " + (type_name.empty() ? "not numeric" : "of type " + type_name + ", not numeric");
  if (!convertible) return name + " is " + type_name + ", wider than the float64 mft computes in";
  if (!outside.empty()) return name + " " + outside + ": mft reads only values stored in the file itself";
  return "";
}

H5O_type_t object_type(hid_t loc, const std::string &path) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  if (H5Oget_info_by_name3(loc, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return H5O_TYPE_UNKNOWN;
#else
  H5O_info_t info;
  if (H5Oget_info_by_name2(loc, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return H5O_TYPE_UNKNOWN;
#endif
  return info.type;
}

DatasetInfo describe(hid_t file, const std::string &path) {
  DatasetInfo info;
  info.exists = exists(file, path);
  if (!info.exists) return info;
  info.link = non_hard_link(file, path);
  if (object_type(file, path) != H5O_TYPE_DATASET) return info;
  Handle ds(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return info;
  Handle type(H5Dget_type(ds)), space(H5Dget_space(ds)), dcpl(H5Dget_create_plist(ds));
  if (!type.valid() || !space.valid() || !dcpl.valid()) return info;
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) return info;
  info.dims.resize(static_cast<size_t>(rank));
  info.maxdims.resize(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, info.dims.data(), info.maxdims.data());
  info.type_class = H5Tget_class(type);
  info.type_name = type_name(type);
  info.float64 = H5Tequal(type, H5T_IEEE_F64LE) > 0 || H5Tequal(type, H5T_IEEE_F64BE) > 0;
  info.int64 = H5Tequal(type, H5T_STD_I64LE) > 0 || H5Tequal(type, H5T_STD_I64BE) > 0;
  info.convertible = info.numeric() && H5Tget_size(type) <= 8;
  info.chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
  H5D_alloc_time_t alloc = H5D_ALLOC_TIME_ERROR;
  info.early_allocation = H5Pget_alloc_time(dcpl, &alloc) >= 0 && alloc == H5D_ALLOC_TIME_EARLY;
  const int filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters; ++i) {
    char name[64] = "";
    unsigned flags = 0, config = 0;
    size_t values = 0;
    H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &values, nullptr, sizeof name, name, &config);
    info.filters += (info.filters.empty() ? "" : ", ") + std::string(name[0] ? name : "unnamed");
  }
  info.outside = storage_outside(file, dcpl);
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t object;
  if (H5Oget_info3(ds, &object, H5O_INFO_BASIC) >= 0)
    info.identity = std::to_string(object.fileno) + ":" +
                    std::string(reinterpret_cast<const char *>(&object.token), sizeof object.token);
#else
  H5O_info_t object;
  if (H5Oget_info2(ds, &object, H5O_INFO_BASIC) >= 0)
    info.identity = std::to_string(object.fileno) + ":" + std::to_string(object.addr);
#endif
  H5Eclear2(H5E_DEFAULT);
  info.is_dataset = true;
  return info;
}

std::string unwritten_rows(hid_t file, const std::string &path, hsize_t rows) {
  Handle ds(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return ""; // describe() says what it is
  }
  Handle space(H5Dget_space(ds)), dcpl(H5Dget_create_plist(ds));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank <= 0 || !dcpl.valid()) return "";
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  dims[0] = std::min(dims[0], rows);
  for (hsize_t n : dims)
    if (n == 0) return "";
  H5D_space_status_t status{};
  if (H5Dget_space_status(ds, &status) < 0 || status == H5D_SPACE_STATUS_ALLOCATED) return "";
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout == H5D_VIRTUAL) return ""; // its sources are judged as storage outside the file
  const std::string never = path + " holds values that were never written (";
  const std::string fill = "; HDF5 would read its fill value)";
  if (layout != H5D_CHUNKED) return never + "its storage was never allocated" + fill;
  std::vector<hsize_t> chunk(static_cast<size_t>(rank)), count(dims.size()), at(dims.size(), 0),
      offset(dims.size());
  if (H5Pget_chunk(dcpl, rank, chunk.data()) != rank) return "";
  double total = 1;
  for (size_t i = 0; i < dims.size(); ++i) total *= static_cast<double>(count[i] = (dims[i] + chunk[i] - 1) / chunk[i]);
  // Beyond a million chunks, only their number is compared (a count that
  // falls short is certain; one that does not may still hide a gap).
  if (total > 1e6) {
    hsize_t allocated = 0;
    if (H5Dget_num_chunks(ds, space, &allocated) >= 0 && static_cast<double>(allocated) < total)
      return never + "only " + std::to_string(allocated) + " of its " +
             std::to_string(static_cast<long long>(total)) + " chunks were written" + fill;
    return "";
  }
  for (;;) {
    for (size_t i = 0; i < dims.size(); ++i) offset[i] = at[i] * chunk[i];
    unsigned mask = 0;
    haddr_t address = HADDR_UNDEF;
    hsize_t bytes = 0;
    if (H5Dget_chunk_info_by_coord(ds, offset.data(), &mask, &address, &bytes) < 0 || address == HADDR_UNDEF) {
      H5Eclear2(H5E_DEFAULT);
      return never + "its chunk at row " + std::to_string(offset[0]) + " was never written" + fill;
    }
    size_t i = dims.size();
    while (i > 0 && ++at[i - 1] == count[i - 1]) at[--i] = 0;
    if (i == 0) return "";
  }
}

} // namespace mft::h5
