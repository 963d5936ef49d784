"""The Python a tool of the checkout runs under, and the mft program, as
scripts/env.sh finds them. A tool started by a python3 that lacks numpy or
h5py (a pyenv's, a bare system's) runs again, once, under $MFT_PYTHON or the
first python3 with h5py that scripts/env.sh finds; where there is none, one
line says what is missing (exit 2). This module imports nothing heavy: it
runs before the tool's own imports.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

_AGAIN = "MFT_TOOL_PYTHON_CHOSEN"  # set for the second start: never a third


def env_script():
    """env.sh of this checkout (scripts/env.sh) or installation
    (PREFIX/share/mft/env.sh), or None (a pip installation)."""
    package = Path(__file__).resolve().parent
    candidates = [package.parent / "env.sh"]
    if len(package.parents) > 3:  # PREFIX/lib/python3/dist-packages/mft
        candidates.append(package.parents[3] / "share" / "mft" / "env.sh")
    return next((c for c in candidates if c.is_file()), None)


def environment():
    """(mft program, Python) as scripts/env.sh finds them: $MFT or
    MFT_PROGRAM, and $MFT_PYTHON or the first python3 with h5py ('' when
    it finds none, or when there is no env.sh)."""
    script = env_script()
    if script is None:
        return os.environ.get("MFT") or os.environ.get("MFT_PROGRAM") or "", os.environ.get("MFT_PYTHON", "")
    done = subprocess.run(["bash", "-c", 'source "$1" >/dev/null 2>&1; printf "%s\\0%s" '
                                         '"${MFT:-${MFT_PROGRAM:-}}" "${MFT_PYTHON:-}"', "env", str(script)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    program, _, python = done.stdout.partition("\0")
    return program, python


def analysis_python(needed=("numpy", "h5py")):
    """Returns when this Python has the modules `needed`; else starts the
    tool again under the Python env.sh chooses, or exits with one line."""
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if not missing:
        return
    other = "" if os.environ.get(_AGAIN) else os.environ.get("MFT_PYTHON") or environment()[1]
    if other:
        os.environ[_AGAIN] = "1"
        try:
            os.execv(other, [other, *sys.argv])
        except OSError as e:
            print(f"error: MFT_PYTHON {other}: cannot run it ({e.strerror or e})", file=sys.stderr)
            sys.exit(2)
    print(f"error: {sys.executable} lacks {', '.join(missing)}, and no other Python with them was found "
          "(set MFT_PYTHON to one; scripts/install-deps.sh installs Debian's python3-h5py)", file=sys.stderr)
    sys.exit(2)
