#!/usr/bin/env python3
"""Clusters, cosines and the interaction energy of the tokens along depth
of an mft forward run (mft.tokens), with a figure of their trajectories.

`--help` prints the full description.
"""
from mft.tokens import main

if __name__ == "__main__":
    main()
