# The Python interpreter of the tests (MFT_PYTHON): the first of `python3` on
# PATH and /usr/bin/python3 that imports what the analysis needs (numpy,
# h5py, matplotlib), so a module or conda Python with h5py is used where it
# comes first, and Debian's where the one on PATH lacks them. Set
# -DMFT_PYTHON=/path/to/python3 to choose. The installed commands do not use
# it: they run `python3` from PATH, or $MFT_PYTHON when set.
if(NOT MFT_PYTHON)
  find_program(MFT_PATH_PYTHON3 NAMES python3)
  foreach(candidate IN ITEMS ${MFT_PATH_PYTHON3} /usr/bin/python3)
    execute_process(COMMAND ${candidate} -c "import numpy, h5py, matplotlib"
                    RESULT_VARIABLE missing OUTPUT_QUIET ERROR_QUIET)
    if(missing EQUAL 0)
      set(MFT_PYTHON ${candidate} CACHE FILEPATH "Python interpreter of the tests (with numpy, h5py, matplotlib)")
      break()
    endif()
  endforeach()
  if(NOT MFT_PYTHON)
    message(WARNING "no python3 with numpy, h5py and matplotlib (tried ${MFT_PATH_PYTHON3} /usr/bin/python3): "
                    "the Python tests will fail; pass -DMFT_PYTHON=...")
    set(MFT_PYTHON python3)
  endif()
endif()
message(STATUS "mft: Python of the tests: ${MFT_PYTHON}")
