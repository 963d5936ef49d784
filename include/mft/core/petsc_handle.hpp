#pragma once
// Ownership of PETSc objects and the error bridge of PETSc callbacks.
#include <petscts.h>
#include <petscversion.h>

#include <exception>
#include <utility>

// Where PETSc releases differ (mft builds with 3.18 and later):
// PETSC_SUCCESS arrived in 3.19 (with the optional strict PetscErrorCode
// enum, under which a plain 0 does not convert); MatShellSetOperation takes
// a PetscErrorCodeFn * from 3.24 on.
#if !PETSC_VERSION_GE(3, 19, 0)
#define PETSC_SUCCESS ((PetscErrorCode)0)
#endif
#if PETSC_VERSION_GE(3, 24, 0)
#define MFT_PETSC_OPERATION(f) reinterpret_cast<PetscErrorCodeFn *>(f)
#else
#define MFT_PETSC_OPERATION(f) reinterpret_cast<void (*)(void)>(f)
#endif

namespace mft {

// Owns one PETSc object and destroys it with its XDestroy, so a constructor
// that throws after TSCreate leaks nothing. Converts to the raw handle for
// PETSc calls; out() hands PETSc the slot to create into.
template <class T, PetscErrorCode (*Destroy)(T *)>
class PetscHandle {
public:
  PetscHandle() = default;
  ~PetscHandle() { reset(); }
  PetscHandle(PetscHandle &&other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  PetscHandle &operator=(PetscHandle &&other) noexcept {
    if (this != &other) {
      reset();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  PetscHandle(const PetscHandle &) = delete;
  PetscHandle &operator=(const PetscHandle &) = delete;

  operator T() const { return object_; }
  T get() const { return object_; }
  // The slot for XCreate(..., out()); whatever was held is destroyed first.
  T *out() {
    reset();
    return &object_;
  }
  // The slot itself, for calls that take an array of handles.
  T *slot() { return &object_; }
  void reset() {
    if (object_) Destroy(&object_); // a destructor does not throw: the code is dropped
    object_ = nullptr;
  }

private:
  T object_ = nullptr;
};

using PetscTS = PetscHandle<TS, TSDestroy>;
using PetscVec = PetscHandle<Vec, VecDestroy>;
using PetscMat = PetscHandle<Mat, MatDestroy>;

// The preamble of every mft callback that PETSc calls: runs `work`, keeping
// an exception in `error` (rethrown by petsc_call_with_callbacks once the
// PETSc call returns) instead of letting it cross PETSc's C frames. Returns
// whether `work` succeeded; the callback turns false into a PETSc error.
template <class Work>
bool guarded(std::exception_ptr &error, Work &&work) noexcept {
  try {
    work();
    return true;
  } catch (...) {
    error = std::current_exception();
    return false;
  }
}

} // namespace mft
