#!/usr/bin/env python3
"""Collects the runs of a sweep into a table (stdout and CSV) and a plot of
the final risk against M and L (mft.sweep).

`--help` prints the full description.
"""
import sys

from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.sweep import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
