# What `cmake --install build --prefix P` puts under P:
#   bin/        mft, mft-bench and the analysis commands (mft-plot-history, ...)
#   lib/        the layer libraries (libmft_core.a ... libmft_runs.a)
#   lib/cmake/mft/  the package: find_package(mft) gives mft::mft
#   include/mft/    the public headers, with the umbrella mft/mft.hpp
#   lib/python3/dist-packages/mft/  the Python analysis package
include(CMakePackageConfigHelpers)

set(MFT_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/mft")
set(MFT_PYTHON_DIR "lib/python3/dist-packages")

install(TARGETS mft mft-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(layer_targets)
foreach(layer IN LISTS MFT_LAYERS)
  list(APPEND layer_targets mft_${layer})
endforeach()
install(TARGETS ${layer_targets} mftlib EXPORT mftTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/mft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES "${PROJECT_BINARY_DIR}/generated/mft/core/version.hpp"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mft/core)

install(EXPORT mftTargets NAMESPACE mft:: DESTINATION ${MFT_CMAKE_DIR})
# The model and the run file's schema, which the headers cite.
install(FILES docs/MODEL.md docs/FORMAT.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
pkg_get_variable(MFT_PETSC_PCFILEDIR PETSc pcfiledir)
configure_package_config_file(cmake/mftConfig.cmake.in "${PROJECT_BINARY_DIR}/mftConfig.cmake"
                              INSTALL_DESTINATION ${MFT_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mftConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mftConfig.cmake" "${PROJECT_BINARY_DIR}/mftConfigVersion.cmake"
        DESTINATION ${MFT_CMAKE_DIR})

# The Python package, and one command per analysis tool: a shell wrapper that
# runs the tool's module with the installed package on PYTHONPATH. The
# package goes to lib/python3/dist-packages under the prefix (not
# CMAKE_INSTALL_LIBDIR, which is lib64 on some distributions).
install(DIRECTORY scripts/mft DESTINATION ${MFT_PYTHON_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
foreach(tool IN ITEMS plot-history:mft.history plot-particles:mft.particles_plot compare-runs:mft.compare
                      collect-sweep:mft.sweep+collect ntk-table:mft.ntk_table scaling:mft.scaling)
  # name:module[+subcommand]
  string(REPLACE ":" ";" pair "${tool}")
  list(GET pair 0 name)
  list(GET pair 1 module)
  string(REPLACE "+" " " module "${module}")
  set(wrapper "${PROJECT_BINARY_DIR}/python-commands/mft-${name}")
  file(WRITE "${wrapper}"
       "#!/bin/sh\n"
       "# mft-${name}: the installed mft's ${module} (python3 -m ${module} --help)\n"
       "here=$(dirname \"$(readlink -f \"$0\")\")\n"
       "PYTHONPATH=\"$here/../${MFT_PYTHON_DIR}\${PYTHONPATH:+:$PYTHONPATH}\" exec /usr/bin/python3 -m ${module} \"$@\"\n")
  install(PROGRAMS "${wrapper}" DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()
