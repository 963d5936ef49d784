#!/usr/bin/env python3
"""Plots the risk and objective of mft training runs against training time
and fits the rate of linear convergence (mft.history).

`--help` prints the full description.
"""
from mft.history import main

if __name__ == "__main__":
    main()
