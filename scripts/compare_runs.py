#!/usr/bin/env python3
"""Compares mft runs: the conditional W2 distance between their particle
measures and the difference of their loss curves (mft.compare).

`--help` prints the full description.
"""
from mft.compare import main

if __name__ == "__main__":
    main()
