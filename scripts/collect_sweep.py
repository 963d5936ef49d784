#!/usr/bin/env python3
"""Collects the runs of a sweep into a table (stdout and CSV) and a plot of
the final risk against M and L (mft.sweep).

`--help` prints the full description.
"""
import sys

from mft.sweep import main

if __name__ == "__main__":
    sys.exit(main())
