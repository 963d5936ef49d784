#include "mft/io/h5.hpp"

#include "mft/core/error.hpp"

#include <algorithm>
#include <unistd.h>

namespace mft::h5 {
namespace {

void check(herr_t status, const std::string &what) {
  if (status < 0) throw Error("HDF5: " + what + " failed");
}

hid_t checked(hid_t id, const std::string &what) {
  if (id < 0) throw Error("HDF5: " + what + " failed");
  return id;
}

Handle scalar_space() { return Handle(checked(H5Screate(H5S_SCALAR), "H5Screate")); }

Handle make_attribute(hid_t obj, const std::string &name, hid_t type, hid_t space) {
  if (H5Aexists(obj, name.c_str()) > 0) check(H5Adelete(obj, name.c_str()), "H5Adelete " + name);
  return Handle(checked(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                        "creating attribute " + name));
}

} // namespace

void Handle::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
  case H5I_FILE: H5Fclose(id_); break;
  case H5I_GROUP: H5Gclose(id_); break;
  case H5I_DATASET: H5Dclose(id_); break;
  case H5I_DATASPACE: H5Sclose(id_); break;
  case H5I_DATATYPE: H5Tclose(id_); break;
  case H5I_ATTR: H5Aclose(id_); break;
  case H5I_GENPROP_LST: H5Pclose(id_); break;
  default: break;
  }
  id_ = -1;
}

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Handle open_input(const std::string &path, const std::string &key) {
  silence_errors();
  if (access(path.c_str(), R_OK) != 0)
    throw InputError(key_error(key, path, "no such readable file"));
#if H5_VERSION_GE(1, 12, 0)
  const htri_t hdf5 = H5Fis_accessible(path.c_str(), H5P_DEFAULT);
#else
  const htri_t hdf5 = H5Fis_hdf5(path.c_str());
#endif
  if (hdf5 <= 0) throw InputError(key_error(key, path, "not an HDF5 file"));
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw InputError(key_error(key, path, "HDF5 cannot open the file"));
  return Handle(f);
}

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

std::string DatasetInfo::shape_text() const {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::string DatasetInfo::unreadable(const std::string &name) const {
  if (!exists) return "has no " + name;
  if (!is_dataset) return name + " is not a dataset";
  if (!numeric()) return name + " is not numeric";
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
  info.chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
  info.is_dataset = true;
  return info;
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

std::string read_string_attribute(hid_t obj, const std::string &name) {
  Handle a(checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "opening attribute " + name));
  Handle type(checked(H5Aget_type(a), "H5Aget_type"));
  if (H5Tget_class(type) != H5T_STRING) throw Error("attribute " + name + " is not a string");
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
  std::string out(size, '\0');
  check(H5Aread(a, type, out.data()), "reading attribute " + name);
  return out.substr(0, out.find('\0'));
}

long long read_integer_attribute(hid_t obj, const std::string &name) {
  Handle a(checked(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "opening attribute " + name));
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

// The `count` names that name_at(i, buffer, size) gives, in name order.
template <class NameAt>
std::vector<std::string> names_by_index(hsize_t count, NameAt name_at) {
  std::vector<std::string> names;
  for (hsize_t i = 0; i < count; ++i) {
    char name[256];
    if (name_at(i, name, sizeof name) > 0) names.emplace_back(name);
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
  check(H5Dread(dataset, mem_type, mem_space, file_space, dxpl, elements ? data : nullptr), "H5Dread");
}

Handle open_parallel(const std::string &path, MPI_Comm comm, const std::string &key) {
  silence_errors();
  Handle fapl(checked(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  check(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  check(H5Pset_coll_metadata_write(fapl, true), "H5Pset_coll_metadata_write");
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  if (f < 0) throw InputError(key_error(key, path, "HDF5 cannot open the file for writing"));
  return Handle(f);
}

Handle create_parallel(const std::string &path, MPI_Comm comm, const std::string &key,
                       const std::string &name) {
  silence_errors();
  Handle fapl(checked(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  check(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  // Metadata writes are collective: every rank makes the same calls.
  check(H5Pset_coll_metadata_write(fapl, true), "H5Pset_coll_metadata_write");
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (f < 0) throw InputError(key_error(key, name, "HDF5 cannot create the file " + path));
  return Handle(f);
}

Handle create_group(hid_t parent, const std::string &name) {
  return Handle(checked(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "creating group " + name));
}

void write_attribute(hid_t obj, const std::string &name, long long value) {
  Handle space = scalar_space();
  Handle a = make_attribute(obj, name, H5T_STD_I64LE, space);
  check(H5Awrite(a, H5T_NATIVE_LLONG, &value), "writing attribute " + name);
}

void write_attribute(hid_t obj, const std::string &name, int value) {
  Handle space = scalar_space();
  Handle a = make_attribute(obj, name, H5T_STD_I32LE, space);
  check(H5Awrite(a, H5T_NATIVE_INT, &value), "writing attribute " + name);
}

void write_attribute(hid_t obj, const std::string &name, double value) {
  Handle space = scalar_space();
  Handle a = make_attribute(obj, name, H5T_IEEE_F64LE, space);
  check(H5Awrite(a, H5T_NATIVE_DOUBLE, &value), "writing attribute " + name);
}

void write_attribute(hid_t obj, const std::string &name, const std::string &value) {
  // Variable-length UTF-8: h5py reads it as str, an empty string included.
  Handle type(checked(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check(H5Tset_size(type, H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "H5Tset_cset");
  Handle space = scalar_space();
  Handle a = make_attribute(obj, name, type, space);
  const char *text = value.c_str();
  check(H5Awrite(a, type, &text), "writing attribute " + name);
}

void write_attribute(hid_t obj, const std::string &name, const std::vector<double> &value) {
  const hsize_t n = value.size();
  Handle space(checked(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
  Handle a = make_attribute(obj, name, H5T_IEEE_F64LE, space);
  if (n > 0) check(H5Awrite(a, H5T_NATIVE_DOUBLE, value.data()), "writing attribute " + name);
}

Handle create_dataset(hid_t file, const std::string &path, const std::vector<hsize_t> &shape) {
  Handle space(checked(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                       "H5Screate_simple"));
  return Handle(checked(H5Dcreate2(file, path.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT),
                        "creating " + path));
}

void write_dataset(hid_t file, const std::string &path, const std::vector<hsize_t> &shape,
                   const double *data, MPI_Comm comm) {
  Handle ds = create_dataset(file, path, shape);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<hsize_t> start(shape.size(), 0), count = shape;
  if (rank != 0) count.assign(shape.size(), 0);
  write_block(ds, start, count, H5T_NATIVE_DOUBLE, data);
}

Handle create_growing(hid_t file, const std::string &path, const std::vector<hsize_t> &row_shape,
                      hid_t type, const std::vector<hsize_t> &chunk_row, hsize_t chunk_rows) {
  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{chunk_rows};
  dims.insert(dims.end(), row_shape.begin(), row_shape.end());
  maxdims.insert(maxdims.end(), row_shape.begin(), row_shape.end());
  chunk.insert(chunk.end(), chunk_row.begin(), chunk_row.end());
  Handle space(checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()),
                       "H5Screate_simple"));
  Handle dcpl(checked(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
  check(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), "H5Pset_chunk " + path);
  return Handle(checked(H5Dcreate2(file, path.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                        "creating " + path));
}

void set_rows(hid_t dataset, hsize_t rows) {
  Handle space(checked(H5Dget_space(dataset), "H5Dget_space"));
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  dims[0] = rows;
  check(H5Dset_extent(dataset, dims.data()), "H5Dset_extent");
}

void write_block(hid_t dataset, const std::vector<hsize_t> &start,
                 const std::vector<hsize_t> &count, hid_t mem_type, const void *data) {
  Handle file_space(checked(H5Dget_space(dataset), "H5Dget_space"));
  hsize_t elements = 1;
  for (hsize_t c : count) elements *= c;
  Handle mem_space;
  if (elements == 0) {
    check(H5Sselect_none(file_space), "H5Sselect_none");
    const hsize_t one = 1;
    mem_space = Handle(checked(H5Screate_simple(1, &one, nullptr), "H5Screate_simple"));
    check(H5Sselect_none(mem_space), "H5Sselect_none");
  } else {
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr),
          "H5Sselect_hyperslab");
    mem_space = Handle(checked(H5Screate_simple(1, &elements, nullptr), "H5Screate_simple"));
  }
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
  check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  check(H5Dwrite(dataset, mem_type, mem_space, file_space, dxpl, elements ? data : nullptr),
        "H5Dwrite");
}

} // namespace mft::h5
