#pragma once
// One rank's failed write must end the job at once. Inside a collective
// HDF5 call (a flush, an extent, a collective write) a rank whose write
// fails leaves the call's protocol while the others wait in it, and nothing
// returns to mft on any rank. Open MPI's OMPIO does not even report a failed
// write as an error: the write returns MPI_SUCCESS with fewer bytes written.
//
// So mft checks the writes themselves, through the MPI profiling interface:
// this layer defines MPI_File_write_at, MPI_File_write_at_all, MPI_File_write,
// MPI_File_write_all, MPI_File_set_size and MPI_File_sync, which call the
// next definition of the same name (a preloaded profiling tool's such as
// Darshan's, so that it still sees them, or else the PMPI_ version) and, on
// a watched file, end the job (abort_job) on an error code or a short write,
// with the line its describe function makes of the system's error. Other
// files pass through unchanged. Programs that link this layer get these
// definitions (HDF5's calls reach them through the dynamic linker, as a
// profiling tool's would). HDF5 1.10 to 1.14 writes through these calls
// only; MPI-4's large-count (_c) and nonblocking writes are not wrapped.
#include <mpi.h>

#include <functional>
#include <string>

namespace mft {

// From now on a failed write to `file` on this rank ends the job with the
// line `describe(why)`; why: e.g. "No space left on device
// (MPI_File_write_at_all wrote 0 of 4096 bytes)". unwatch_mpi_file once the
// file is closed (MPI may give a later file the same handle).
void watch_mpi_file(MPI_File file, std::function<std::string(const std::string &why)> describe);
void unwatch_mpi_file(MPI_File file);

} // namespace mft
