#!/usr/bin/env python3
"""Draws each slice's head-averaged attention from `mft forward
--output.attention true` and prints the previous-token and induction scores
(mft.attention_plot).

`--help` prints the full description.
"""
from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.attention_plot import main  # noqa: E402

if __name__ == "__main__":
    main()
