// The HDF5 handles, the error checks and the writing side of h5.hpp (the
// reading side: h5_input.cpp).
#include "mft/io/h5.hpp"

#include "h5_check.hpp"
#include "mft/core/error.hpp"

#include <algorithm>

namespace mft::h5 {

namespace detail {

// The innermost entry of HDF5's error stack: where the failure was first
// seen (for a failed write, the driver's message with the system's error).
static herr_t keep_innermost(unsigned n, const H5E_error2_t *entry, void *out) {
  if (n == 0 && entry->desc) *static_cast<std::string *>(out) = entry->desc;
  return 0;
}

std::string failure(const std::string &what) {
  std::string why;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &why);
  H5Eclear2(H5E_DEFAULT);
  for (char &c : why)
    if (c == '\n') c = ' ';
  return "HDF5: " + printable(what) + " failed" + (why.empty() ? "" : " (" + printable(why) + ")");
}

std::string object_name(hid_t object) {
  char name[256] = "";
  const ssize_t length = H5Iget_name(object, name, sizeof name);
  return length > 0 ? std::string(name) : std::string("a dataset");
}

} // namespace detail

using detail::check;
using detail::checked;
using detail::object_name;

namespace {

Handle scalar_space() { return Handle(checked(H5Screate(H5S_SCALAR), "H5Screate")); }

// The attribute `name` of obj to write: the existing one when its type and
// shape fit (rewritten in place: a count raised at every snapshot takes no
// new file space), else a new one.
Handle make_attribute(hid_t obj, const std::string &name, hid_t type, hid_t space) {
  if (H5Aexists(obj, name.c_str()) > 0) {
    Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
    if (a.valid()) {
      Handle old_type(H5Aget_type(a)), old_space(H5Aget_space(a));
      if (old_type.valid() && old_space.valid() && H5Tequal(old_type, type) > 0 &&
          H5Sextent_equal(old_space, space) > 0)
        return a;
    }
    check(H5Adelete(obj, name.c_str()), "H5Adelete " + name);
  }
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

MPI_File mpi_file(hid_t file) {
  void *handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle) fail("H5Fget_vfd_handle");
  return *static_cast<MPI_File *>(handle);
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

Handle open_group(hid_t parent, const std::string &name) {
  return Handle(checked(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), "opening group " + name));
}

Handle open_dataset(hid_t parent, const std::string &name) {
  return Handle(checked(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "opening dataset " + name));
}

std::vector<hsize_t> shape(hid_t dataset) {
  Handle space(checked(H5Dget_space(dataset), "H5Dget_space"));
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) fail("reading a dataset's shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

void fail(const std::string &what) { throw Error(detail::failure(what)); }

void close_file(Handle &file) {
  const hid_t id = file.release(); // H5Fclose releases the id, failing or not
  if (id >= 0 && H5Fclose(id) < 0) fail("closing the file");
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

void write_dataset(hid_t file, const std::string &path, const std::vector<hsize_t> &shape,
                   const long long *data, MPI_Comm comm) {
  Handle space(checked(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                       "H5Screate_simple"));
  Handle ds(checked(H5Dcreate2(file, path.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                    "creating " + path));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<hsize_t> start(shape.size(), 0), count = shape;
  if (rank != 0) count.assign(shape.size(), 0);
  write_block(ds, start, count, H5T_NATIVE_LLONG, data);
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

hsize_t growth_bytes(hid_t dataset, hsize_t rows) {
  const std::vector<hsize_t> dims = shape(dataset);
  Handle dcpl(checked(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  Handle type(checked(H5Dget_type(dataset), "H5Dget_type"));
  std::vector<hsize_t> chunk(dims.size(), 1);
  if (dims.empty() || H5Pget_layout(dcpl) != H5D_CHUNKED ||
      H5Pget_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()) < 0)
    return 0;
  const auto whole = [](hsize_t n, hsize_t c) { return (n + c - 1) / c; };
  // Parallel HDF5 allocates whole chunks, as soon as the extent covers them.
  hsize_t block = H5Tget_size(type) * chunk[0];
  for (size_t i = 1; i < dims.size(); ++i) block *= whole(dims[i], chunk[i]) * chunk[i];
  const hsize_t before = whole(dims[0], chunk[0]), after = whole(rows, chunk[0]);
  return after > before ? (after - before) * block : 0;
}

void set_rows(hid_t dataset, hsize_t rows) {
  std::vector<hsize_t> dims = shape(dataset);
  dims[0] = rows;
  check(H5Dset_extent(dataset, dims.data()), "extending " + object_name(dataset));
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
        "writing " + object_name(dataset));
}

} // namespace mft::h5
