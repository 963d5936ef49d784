#!/usr/bin/env python3
"""Draws each slice's head-averaged attention from `mft forward
--output.attention true` and prints the previous-token and induction scores
(mft.attention_plot).

`--help` prints the full description.
"""
from mft.attention_plot import main

if __name__ == "__main__":
    main()
