#!/usr/bin/env python3
"""The injectivity table of [B]: the V-part NTK and the log-sum-exp margin
of each distribution family (mft.ntk_table).

`--help` prints the full description.
"""
from mft.tool_python import analysis_python

analysis_python()  # a python3 without h5py runs this again under the one scripts/env.sh finds
from mft.ntk_table import main  # noqa: E402

if __name__ == "__main__":
    main()
