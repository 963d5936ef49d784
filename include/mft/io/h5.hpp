#pragma once
// Thin RAII over the HDF5 C API: the few operations mft's files need.
// All helpers throw mft::Error (or InputError for a bad input file) with a
// one-line message; HDF5's own error stack printing is switched off.
#include <hdf5.h>
#include <mpi.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mft::h5 {

class Handle {
public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(Handle &&o) noexcept : id_(o.id_) { o.id_ = -1; }
  Handle &operator=(Handle &&o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = -1;
    }
    return *this;
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();
  // Gives up the id without closing it.
  hid_t release() { return std::exchange(id_, -1); }

private:
  hid_t id_ = -1;
};

// Stops HDF5 from printing its error stack; mft reports errors itself.
void silence_errors();

// --- reading (every rank reads on its own; input files are small) ---------

// Opens an existing file read-only; InputError naming `key = path` when the
// file is missing, not a regular file, not HDF5, or holds an external link
// to something other than a regular file (which HDF5 would open, and a FIFO
// would block).
Handle open_input(const std::string &path, const std::string &key);
bool exists(hid_t file, const std::string &path);

// What an input file holds at `path`, found without reading its values and
// without failing: whether it is a dataset, how it is reached (hard links
// only, or which link is not), its element type, shape, maximum shape,
// layout and where its values are stored. An untrusted file is judged on
// these before anything is read (HDF5's own advice: check the link class,
// datatype and dataspace first).
struct DatasetInfo {
  bool exists = false;     // a link of that name
  bool is_dataset = false; // and it names a dataset (not a group)
  // The first component of the path that is not a hard link, described
  // ("/particles is an external link to b.h5:/particles"); "" when the
  // object is the file's own.
  std::string link;
  H5T_class_t type_class = H5T_NO_CLASS;
  std::string type_name;     // "float64", "float32 (big-endian)", "int32", "uint64", "string", ...
  bool float64 = false;      // IEEE binary64 (either byte order: read exactly)
  bool int64 = false;        // a signed 64-bit integer (either byte order)
  bool convertible = false;  // numbers a float64 holds: a float or an integer of at most 8 bytes
  std::vector<hsize_t> dims, maxdims;
  bool chunked = false;
  bool early_allocation = false; // its chunks are allocated when it grows (as mft creates them)
  std::string filters;           // its filter pipeline ("deflate, shuffle"), "" for none
  // Values kept outside the file (external raw storage, a virtual
  // dataset's sources), described; "" when they are stored in the file.
  std::string outside;
  // The object itself (its file number and address or token, as bytes):
  // two names with one identity are hard links to one dataset.
  std::string identity;
  bool numeric() const { return type_class == H5T_INTEGER || type_class == H5T_FLOAT; }
  // "(3, 4, 8)"
  std::string shape_text() const;
  // Why the object `name` cannot be read as numbers ("has no NAME", "NAME is
  // not a dataset", "NAME is a string", "NAME keeps its data in F ..."); ""
  // when it can. Links are the caller's to judge (a run file allows none).
  std::string unreadable(const std::string &name) const;
};
DatasetInfo describe(hid_t file, const std::string &path);

// Why the first `rows` rows of the dataset at `path` hold values never
// written ("NAME holds values that were never written (its chunk at row 3
// was never written; HDF5 would read its fill value)"); "" when every chunk
// (or the contiguous storage) holding them was allocated. A dataset
// allocated early (as mft creates its own) counts as written: its fill
// values were written when it grew.
std::string unwritten_rows(hid_t file, const std::string &path, hsize_t rows);

// The kind of the object at `path` (group, dataset, ...), or
// H5O_TYPE_UNKNOWN when it cannot be read. The same on HDF5 1.10, 1.12, 1.14.
H5O_type_t object_type(hid_t loc, const std::string &path);
std::vector<hsize_t> dataset_shape(hid_t file, const std::string &path);
// Reads a whole dataset as float64 (HDF5 converts integer or float32 data).
std::vector<double> read_doubles(hid_t file, const std::string &path);

// The first component of `path` that is not a hard link, described; "" when
// every one is (the object is the file's own, not another file's or place's).
std::string non_hard_link(hid_t file, const std::string &path);

// Attributes, read back by their stored class. The readers of one value
// (string, integer) refuse an attribute that is not a scalar, and the
// integer reader one that is not an integer of at most 8 bytes: Error
// naming the attribute, never a read past one value.
enum class AttributeClass { String, Integer, Float, Other };
AttributeClass attribute_class(hid_t obj, const std::string &name);
std::string read_string_attribute(hid_t obj, const std::string &name);
long long read_integer_attribute(hid_t obj, const std::string &name);
std::vector<double> read_float_attribute(hid_t obj, const std::string &name); // scalar: one value
std::vector<std::string> attribute_names(hid_t obj);
// Names of the links in a group, in name order.
std::vector<std::string> member_names(hid_t group);

// Reads this rank's block (start/count over every dimension) of a dataset
// as float64 or int64 (`mem_type`); collective on a file opened with
// MPI-IO, unless `collective` is false (a file opened by each rank alone).
void read_block(hid_t dataset, const std::vector<hsize_t> &start, const std::vector<hsize_t> &count,
                hid_t mem_type, void *data, bool collective = true);

// Opens an existing file read-write with the MPI-IO driver on comm;
// InputError `key = path: why` when it cannot.
Handle open_parallel(const std::string &path, MPI_Comm comm, const std::string &key);

// Opens the group or dataset `name` below `parent`; Error when it cannot.
Handle open_group(hid_t parent, const std::string &name);
Handle open_dataset(hid_t parent, const std::string &name);
// The current shape of an open dataset.
std::vector<hsize_t> shape(hid_t dataset);
// Throws Error "HDF5: WHAT failed (why)", why from HDF5's error stack (for
// a failed write, the system's error such as "No space left on device").
[[noreturn]] void fail(const std::string &what);

// --- writing (collective on the file's communicator) ----------------------

// The MPI-IO handle of a file opened with the MPI-IO driver (to watch its
// writes: mpi_io_watch.hpp).
MPI_File mpi_file(hid_t file);

// Creates (truncates) a file with the MPI-IO driver on comm; errors read
// `key = name: why` (name: the file's final name when it is built under
// another).
Handle create_parallel(const std::string &path, MPI_Comm comm, const std::string &key,
                       const std::string &name);
Handle create_group(hid_t parent, const std::string &name);

void write_attribute(hid_t obj, const std::string &name, long long value);
void write_attribute(hid_t obj, const std::string &name, int value);
void write_attribute(hid_t obj, const std::string &name, double value);
void write_attribute(hid_t obj, const std::string &name, const std::string &value);
void write_attribute(hid_t obj, const std::string &name, const std::vector<double> &value);

// Creates the float64 dataset `path` of `shape` (contiguous). Collective.
Handle create_dataset(hid_t file, const std::string &path, const std::vector<hsize_t> &shape);

// A float64 dataset with a fixed shape, written whole by rank 0.
void write_dataset(hid_t file, const std::string &path, const std::vector<hsize_t> &shape,
                   const double *data, MPI_Comm comm);
// The same, int64.
void write_dataset(hid_t file, const std::string &path, const std::vector<hsize_t> &shape,
                   const long long *data, MPI_Comm comm);

// A dataset that grows along its first dimension (unlimited, chunked by
// `chunk_rows` rows of `chunk_row`), with fixed trailing dimensions
// `row_shape`. Starts with 0 rows.
Handle create_growing(hid_t file, const std::string &path, const std::vector<hsize_t> &row_shape,
                      hid_t type, const std::vector<hsize_t> &chunk_row, hsize_t chunk_rows = 1);

// Closes a file, flushing what HDF5 still holds; Error when that fails.
void close_file(Handle &file);

// Bytes of file space a chunked dataset takes when it grows to `rows` rows
// (whole chunks, as parallel HDF5 allocates them).
hsize_t growth_bytes(hid_t dataset, hsize_t rows);

// Grows dataset to `rows` rows (collective; same value on every rank).
void set_rows(hid_t dataset, hsize_t rows);

// Writes this rank's block (start/count cover every dimension, the first
// included) collectively; a rank with an empty block takes part with no data.
void write_block(hid_t dataset, const std::vector<hsize_t> &start,
                 const std::vector<hsize_t> &count, hid_t mem_type, const void *data);

} // namespace mft::h5
