"""The help of the command-line tools in the words of how they were started:
`python3 scripts/plot_history.py` from a checkout, `mft-plot-history` once
installed (the installed command sets sys.argv[0] to its name)."""
import os
import re
import sys


def usage_text(doc):
    """`doc` with its "python3 scripts/NAME.py" usage lines naming the
    command as it was started, when that was not a script of the checkout."""
    name = os.path.basename(sys.argv[0] or "")
    if not name or name.endswith(".py") or name in ("-c", "-m"):
        return doc
    return re.sub(r"python3 scripts/[a-z_]+\.py", name, doc)
