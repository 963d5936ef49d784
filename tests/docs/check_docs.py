#!/usr/bin/env python3
"""The documents stand on their own: every relative link in README.md,
docs/, examples/ and data/ names a file of the repository, no tracked file
points to the folder of shared material beside the checkout, and README.md
stays a guide (at most 300 lines), reference material living in docs/.

  python3 tests/docs/check_docs.py
  python3 tests/docs/check_docs.py PREFIX/share/doc/mft   (an installation's links)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tracked():
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:  # not a checkout (a source tarball): every file there
        return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file() and "build" not in p.parts]
    return done.stdout.split()


def installed_links(doc):
    """The relative links of the documents installed under `doc`
    (PREFIX/share/doc/mft) that name no file there."""
    return [f"{page.relative_to(doc)}: link to {target}, which does not exist"
            for page in sorted(doc.rglob("*.md")) for target in broken_links(page, page.read_text())]


def broken_links(path, text):
    link = re.compile(r"\]\(([^)\s]+)\)")
    for target in link.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        if not re.fullmatch(r"[\w./-]+(#[\w-]+)?", target) or not re.search(r"[./]", target):
            continue  # mathematics in brackets, [f](x), not a link
        if not (path.parent / target.split("#")[0]).exists():
            yield target


def main():
    if len(sys.argv) == 2:  # an installation's documents
        failures = installed_links(Path(sys.argv[1]))
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0
    failures = []
    files = tracked()
    outside = "../" + "shared"
    for name in files:
        path = ROOT / name
        if path.suffix in (".png", ".h5") or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if outside in text:
            failures.append(f"{name}: points to {outside}, outside the repository")
    for name in files:
        if name.endswith(".md"):
            failures += [f"{name}: link to {target}, which does not exist"
                         for target in broken_links(ROOT / name, (ROOT / name).read_text())]
    lines = len((ROOT / "README.md").read_text().splitlines())
    if lines > 300:
        failures.append(f"README.md has {lines} lines; reference material belongs in docs/")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(files)} files, README.md {lines} lines: {'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
