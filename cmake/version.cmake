# The version string, "PROJECT_VERSION (git describe --always --dirty)", is
# written into generated/mft/core/version.hpp at every build, not only at
# configure time: a run file's mft_version and `mft --version` name the
# commit the binary was built from. The header is rewritten only when the
# string changed, so an unchanged tree recompiles nothing.
#
# COMPILED_FOR (the CPU target, compiler and build type) goes beside it.
#
# Run as a script: cmake -DSOURCE_DIR=.. -DOUTPUT=.. -DVERSION=.. -DCOMPILED_FOR=.. -P version.cmake
set(commit "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
endif()
if(commit)
  set(MFT_VERSION_STRING "${VERSION} (${commit})")
else()
  set(MFT_VERSION_STRING "${VERSION}")
endif()
set(MFT_COMPILED_FOR "${COMPILED_FOR}")
configure_file("${SOURCE_DIR}/include/mft/core/version.hpp.in" "${OUTPUT}" @ONLY)
