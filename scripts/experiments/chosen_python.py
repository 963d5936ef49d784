"""Imported first by every driver: finds the package mft (the checkout's
scripts/, or an installation's PREFIX/lib/python3/dist-packages) and, when
the python3 that started the driver lacks what the experiments import
(numpy, h5py, scipy), starts it again under $MFT_PYTHON or the Python
scripts/env.sh chooses (mft.tool_python), or says in one line what is
missing (exit 2). `python3 scripts/experiments/icl.py` thus works from a
pyenv's python3 as from Debian's.
"""
import sys
from pathlib import Path

# A checkout (scripts/experiments/ beside scripts/mft/) or an installation
# (PREFIX/share/mft/experiments/, the package in PREFIX/lib/python3/dist-packages).
HERE = Path(__file__).resolve().parent
CHECKOUT = (HERE.parents[1] / "CMakeLists.txt").is_file()
sys.path.insert(0, str(HERE.parent if CHECKOUT else HERE.parents[2] / "lib" / "python3" / "dist-packages"))

from mft.tool_python import analysis_python  # noqa: E402

analysis_python(("numpy", "h5py", "scipy"))
