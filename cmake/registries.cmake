# Registries built from folders, as LAMMPS builds its style headers: every
# src/<layer>/<folder>/*.cpp is one entry of a registry (a score map, a
# loss, an optimiser). At the start of a line it holds its one registration
# line MACRO(id, ...), the id named as the file (an entry whose name is not
# an identifier gives it as a string after the id), and a line
# MFT_KEY(key, type, default, check, "help") for each configuration key it
# owns (in the registry's section of the configuration). The build copies
# those lines into
#   generated/mft/registry/<folder>.inc        the registration lines
#   generated/mft/registry/<folder>_keys.inc   the entries' keys
# (a key line there reads MFT_ENTRY_KEY(id, key, ...), naming its owner),
# which the key table (core), the registry (the entries' layer) and the
# entries expand, each with its own definition of the macros: core knows an
# entry's name, help, keys and rules without linking its code. Adding an entry
# is adding its file. A registration line stays on one line and holds no
# semicolon.

set(MFT_REGISTRY_DIR "${PROJECT_BINARY_DIR}/generated/mft/registry")

function(mft_registry layer folder macro)
  file(GLOB entries CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${layer}/${folder}/*.cpp")
  list(SORT entries)
  set(note "// Generated from src/${layer}/${folder}/ by cmake/registries.cmake")
  set(lines "${note}: one line per entry.")
  set(keys "${note}: the keys its entries own.")
  foreach(entry IN LISTS entries)
    get_filename_component(stem "${entry}" NAME_WE)
    # Brackets would group a CMake list's items: they travel encoded.
    file(READ "${entry}" content)
    string(REPLACE "[" "<mft-left-bracket>" content "${content}")
    string(REPLACE "]" "<mft-right-bracket>" content "${content}")
    string(REGEX MATCHALL "\n${macro}\\([^\n]*" found "\n${content}")
    string(REGEX MATCHALL "\nMFT_KEY\\([^\n]*" owned "\n${content}")
    list(LENGTH found count)
    if(NOT count EQUAL 1 OR NOT found MATCHES "^\n${macro}\\(${stem},")
      message(FATAL_ERROR "${entry}: needs one line ${macro}(${stem}, ...) (an entry is named as its file)")
    endif()
    foreach(line IN LISTS found owned)
      string(REPLACE "<mft-left-bracket>" "[" line "${line}")
      string(REPLACE "<mft-right-bracket>" "]" line "${line}")
      if(line MATCHES "^\n${macro}\\(")
        string(APPEND lines "${line}")
      else()
        # A key line names the entry that owns it.
        string(REGEX REPLACE "^\nMFT_KEY\\(" "\nMFT_ENTRY_KEY(${stem}, " line "${line}")
        string(APPEND keys "${line}")
      endif()
    endforeach()
  endforeach()
  string(APPEND lines "\n")
  string(APPEND keys "\n")
  file(CONFIGURE OUTPUT "${MFT_REGISTRY_DIR}/${folder}.inc" CONTENT "${lines}" @ONLY)
  file(CONFIGURE OUTPUT "${MFT_REGISTRY_DIR}/${folder}_keys.inc" CONTENT "${keys}" @ONLY)
  target_sources(mft_${layer} PRIVATE ${entries})
  target_include_directories(mft_${layer} PRIVATE "${PROJECT_SOURCE_DIR}/src/${layer}/${folder}")
  # A changed registration line reconfigures.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${entries})
  install(FILES "${MFT_REGISTRY_DIR}/${folder}.inc" "${MFT_REGISTRY_DIR}/${folder}_keys.inc"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/mft/registry")
endfunction()

mft_registry(model score_maps MFT_SCORE_MAP)
mft_registry(model losses MFT_LOSS)
mft_registry(model readouts MFT_READOUT)
mft_registry(model norms MFT_NORM)
mft_registry(model species MFT_SPECIES)
mft_registry(tasks data_tasks MFT_TASK)
mft_registry(train optimizers MFT_OPTIMIZER)
