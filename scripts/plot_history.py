#!/usr/bin/env python3
"""Plots the risk and objective of mft training runs against training time
and fits the rate of linear convergence (mft.history).

`--help` prints the full description.
"""
from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.history import main  # noqa: E402

if __name__ == "__main__":
    main()
