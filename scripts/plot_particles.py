#!/usr/bin/env python3
"""Plots the head particles of an mft run per depth slice at chosen
snapshots (mft.particles_plot).

`--help` prints the full description.
"""
from mft.particles_plot import main

if __name__ == "__main__":
    main()
