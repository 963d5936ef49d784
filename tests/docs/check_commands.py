#!/usr/bin/env python3
"""Every command the documents name runs as they write it: each Python
script that README.md, docs/ and examples/ name (scripts/NAME.py,
scripts/experiments/NAME.py) and that is a command (it has a main;
the experiments' shared modules are not) answers --help when started by a
python3 that lacks numpy and h5py (it runs itself again under $MFT_PYTHON or the
Python scripts/env.sh finds), and each `mft-NAME` command they name is an
installed command (scripts/pyproject.toml's [project.scripts], a program
of apps/, or scripts/mft-sweep).

  python3 tests/docs/check_commands.py
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Scripts that need what is no dependency of mft, and what they need.
EXEMPT = {"scripts/bench_torch.py": "PyTorch (installed by hand to measure the peer)"}


def documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*.md"))]


def named(pattern):
    found = {}
    for doc in documents():
        for name in re.findall(pattern, doc.read_text()):
            found.setdefault(name, doc.relative_to(ROOT).as_posix())
    return found


def commands():
    """The mft-* commands an installation or a checkout has."""
    text = (ROOT / "scripts" / "pyproject.toml").read_text()
    section = re.split(r"^\[project\.scripts\]$", text, maxsplit=1, flags=re.M)[1].split("\n[", 1)[0]
    have = set(re.findall(r"^(mft-[\w-]+)\s*=", section, re.M))
    have |= set(re.findall(r"add_executable\((mft-[\w-]+)", (ROOT / "apps" / "CMakeLists.txt").read_text()))
    have |= {p.name for p in (ROOT / "scripts").glob("mft-*") if os.access(p, os.X_OK)}
    return have


def main():
    failures = []
    have = commands()
    for name, where in sorted(named(r"(?<![\w/.-])(mft-[a-z][\w-]*[a-z])").items()):
        if name not in have:
            failures.append(f"{where} names {name}, which is no command (pyproject.toml, apps/, scripts/)")
    with tempfile.TemporaryDirectory(prefix="mft-commands-") as tmp:
        bare = Path(tmp) / "bare-python3"
        # No site packages: numpy and h5py come from the distribution's, so this Python lacks them.
        bare.write_text(f'#!/usr/bin/env bash\nexec {sys.executable} -S "$@"\n')
        bare.chmod(0o755)
        if subprocess.run([bare, "-c", "import numpy"], capture_output=True).returncode == 0:
            print("skipped the scripts: numpy imports without site packages here")
            scripts = {}
        else:
            scripts = named(r"(?<![\w/.-])(scripts/(?:experiments/)?\w+\.py)\b")
        env = dict(os.environ, MFT_PYTHON=sys.executable)
        env.pop("PYTHONPATH", None)
        for script, where in sorted(scripts.items()):
            if script in EXEMPT:
                print(f"exempt: {script} needs {EXEMPT[script]}")
                continue
            if not (ROOT / script).is_file():
                failures.append(f"{where} names {script}, which does not exist")
                continue
            if "__main__" not in (ROOT / script).read_text():
                print(f"a module, not a command: {script}")
                continue
            done = subprocess.run([bare, script, "--help"], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=300)
            if done.returncode != 0 or "usage" not in done.stdout.lower():
                said = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
                failures.append(f"{where} names {script}: `python3 {script} --help` from a python3 without numpy "
                                f"and h5py exits {done.returncode}: {said}")
            else:
                print(f"ok: {script}")
    for line in failures:
        print(f"FAIL: {line}")
    print(f"{len(failures)} failures" if failures else "every documented command runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
