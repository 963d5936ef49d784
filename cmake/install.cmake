# What `cmake --install build --prefix P` puts under P:
#   bin/        mft, mft-bench and the analysis commands (mft-plot-history, ...)
#   lib/        the layer libraries (libmft_core.a ... libmft_runs.a)
#   lib/cmake/mft/  the package: find_package(mft) gives mft::mft
#   include/mft/    the public headers, with the umbrella mft/mft.hpp
#   lib/python3/dist-packages/mft/  the Python analysis package
#   share/mft/      env.sh, make_digits.py, experiments/, slurm/ (batch scripts)
#   share/doc/mft/  README.md, docs/, examples/ (the checkout's layout)
include(CMakePackageConfigHelpers)

set(MFT_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/mft")
set(MFT_PYTHON_DIR "lib/python3/dist-packages")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS scripts/pyproject.toml)

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
# The documentation as the checkout holds it (README.md, docs/ with its
# figures, examples/), so that every relative link and every example path
# the documents give (examples/teacher.ini, docs/FORMAT.md) holds under
# share/doc/mft; the headers cite docs/MODEL.md and docs/FORMAT.md.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
pkg_get_variable(MFT_PETSC_PCFILEDIR PETSc pcfiledir)
configure_package_config_file(cmake/mftConfig.cmake.in "${PROJECT_BINARY_DIR}/mftConfig.cmake"
                              INSTALL_DESTINATION ${MFT_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mftConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mftConfig.cmake" "${PROJECT_BINARY_DIR}/mftConfigVersion.cmake"
        DESTINATION ${MFT_CMAKE_DIR})

# The Python package, and one command per analysis tool: the commands of
# scripts/pyproject.toml's [project.scripts] (the list pip installs too), each
# a shell wrapper that runs the tool's main with the installed package on
# PYTHONPATH, under $MFT_PYTHON when set, else `python3` from PATH (a module
# or conda Python with h5py works as well as Debian's). The package goes to
# lib/python3/dist-packages under the prefix (not CMAKE_INSTALL_LIBDIR, which
# is lib64 on some distributions).
install(DIRECTORY scripts/mft DESTINATION ${MFT_PYTHON_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
file(STRINGS scripts/pyproject.toml python_commands REGEX "^mft-[a-z-]+ = \"mft\\.[a-z_]+:[a-z_]+\"$")
if(NOT python_commands)
  message(FATAL_ERROR "scripts/pyproject.toml lists no commands under [project.scripts]")
endif()
foreach(line IN LISTS python_commands)
  string(REGEX REPLACE "^(mft-[a-z-]+) = \"(mft\\.[a-z_]+):([a-z_]+)\"$" "\\1;\\2;\\3" parts "${line}")
  list(GET parts 0 name)
  list(GET parts 1 module)
  list(GET parts 2 function)
  set(wrapper "${PROJECT_BINARY_DIR}/python-commands/${name}")
  file(WRITE "${wrapper}"
       "#!/bin/sh\n"
       "# ${name}: the installed mft's ${module}.${function} (${name} --help)\n"
       "here=$(dirname \"$(readlink -f \"$0\")\")\n"
       "PYTHONPATH=\"$here/../${MFT_PYTHON_DIR}\${PYTHONPATH:+:$PYTHONPATH}\" exec \"\${MFT_PYTHON:-python3}\" -c "
       "'import sys; sys.argv[0] = \"${name}\"; from ${module} import ${function}; sys.exit(${function}())' \"$@\"\n")
  install(PROGRAMS "${wrapper}" DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# What a cluster user needs beside the programs, under share/mft: env.sh
# (with the example site file), make_digits.py and make_permutation_pairs.py
# (data files), the experiment drivers and
# the batch scripts. The batch scripts find the rest through the folder their
# installed copies name (cmake/install_batch.cmake writes it in at install
# time, when the prefix is known).
set(MFT_SHARE_DIR "${CMAKE_INSTALL_DATADIR}/mft")
install(FILES scripts/env.sh scripts/site-env.example.sh DESTINATION ${MFT_SHARE_DIR})
install(PROGRAMS scripts/make_digits.py scripts/make_permutation_pairs.py DESTINATION ${MFT_SHARE_DIR})
install(DIRECTORY scripts/experiments DESTINATION ${MFT_SHARE_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(PROGRAMS scripts/slurm/run-mft.sh scripts/slurm/submit_sweep.sh scripts/slurm/local-cluster.sh
                 scripts/slurm/sbatch.sh
        DESTINATION ${MFT_SHARE_DIR}/slurm)
# The site's sbatch options: options.sh reads them from site-options beside
# it (the installation's file, written by whoever runs the installation;
# the example shows the form).
install(FILES scripts/slurm/options.sh scripts/slurm/site-options.example DESTINATION ${MFT_SHARE_DIR}/slurm)
install(CODE "set(MFT_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")\nset(MFT_SHARE_DIR \"${MFT_SHARE_DIR}\")")
install(SCRIPT cmake/install_batch.cmake)
