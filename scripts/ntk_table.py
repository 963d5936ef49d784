#!/usr/bin/env python3
"""The injectivity table of [B]: the V-part NTK and the log-sum-exp margin
of each distribution family (mft.ntk_table).

`--help` prints the full description.
"""
from mft.ntk_table import main

if __name__ == "__main__":
    main()
