# Run by `cmake --install` (install(SCRIPT)): copies the batch scripts into
# PREFIX/share/mft/slurm with the folder of mft's scripts written in, so that
# `sbatch PREFIX/share/mft/slurm/train.sbatch` from any folder finds env.sh
# and run-mft.sh there (a checkout's copies find them under the submit folder).
set(checkout_default [=[${MFT_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}/scripts]=])
foreach(batch train sweep collect scaling)
  file(READ "${MFT_SOURCE_DIR}/scripts/slurm/${batch}.sbatch" text)
  string(FIND "${text}" "${checkout_default}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "scripts/slurm/${batch}.sbatch has no line scripts=\${MFT_SCRIPTS:-${checkout_default}}")
  endif()
  string(REPLACE "${checkout_default}" "${CMAKE_INSTALL_PREFIX}/${MFT_SHARE_DIR}" text "${text}")
  set(out "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${MFT_SHARE_DIR}/slurm/${batch}.sbatch")
  message(STATUS "Installing: ${out}")
  file(WRITE "${out}" "${text}")
  file(CHMOD "${out}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                   WORLD_READ WORLD_EXECUTE)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${out}")
endforeach()
