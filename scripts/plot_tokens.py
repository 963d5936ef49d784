#!/usr/bin/env python3
"""Clusters, cosines and the interaction energy of the tokens along depth
of an mft forward run (mft.tokens), with a figure of their trajectories.

`--help` prints the full description.
"""
from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.tokens import main  # noqa: E402

if __name__ == "__main__":
    main()
