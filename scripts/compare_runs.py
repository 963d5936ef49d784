#!/usr/bin/env python3
"""Compares mft runs: the conditional W2 distance between their particle
measures and the difference of their loss curves (mft.compare).

`--help` prints the full description.
"""
from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.compare import main  # noqa: E402

if __name__ == "__main__":
    main()
