#!/usr/bin/env python3
"""Plots the head particles of an mft run per depth slice at chosen
snapshots (mft.particles_plot).

`--help` prints the full description.
"""
from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.particles_plot import main  # noqa: E402

if __name__ == "__main__":
    main()
