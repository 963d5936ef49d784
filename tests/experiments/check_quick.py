"""Runs one experiment driver's --quick mode into a fresh folder and checks
the shape of what it wrote: the CSV's columns and row count, and a PNG
figure. Not the science: the write-up (docs/EXPERIMENTS.md) judges that.

  /usr/bin/python3 tests/experiments/check_quick.py DRIVER
"""
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# driver: (columns, rows of the quick CSV)
EXPECTED = {
    "width_depth": (["task", "sweep", "M", "L", "seeds", "diverged", "risk", "risk_err", "test_risk",
                     "test_risk_err", "test_accuracy", "test_accuracy_err"], 8),
    "mean_field": (["sweep", "M", "L", "seeds", "distance", "distance_err", "loss_gap", "loss_gap_err", "w2"], 5),
    "ntk_rate": (["case", "seed", "N", "all_min", "all_max", "V_min", "V_max", "bound_low", "bound_high",
                  "first_rate", "first_within", "rate", "rate_err", "within", "drift", "all_min_end",
                  "final_risk"], 3),
    "weight_decay": (["lambda", "seeds", "diverged", "risk", "risk_err", "objective", "objective_err", "norm2"], 3),
    "methods": (["task", "method", "seeds", "diverged", "risk", "risk_err", "reduction", "test_risk",
                 "test_accuracy"], 12),
    "variants": (["attention", "causal", "seeds", "diverged", "all_min", "all_max", "V_min", "V_max", "risk",
                  "risk_err", "reduction"], 4),
    "size_data": (["M", "N", "seeds", "diverged", "risk", "test_risk", "test_risk_err"], 4),
    "d_and_m": (["d", "scaling", "M", "seeds", "distance", "distance_err", "relative", "risk"], 4),
    "lazy": (["M", "seeds", "median", "mean", "q10", "q90", "relative_median", "risk"], 3),
}


def main():
    name = sys.argv[1]
    columns, count = EXPECTED[name]
    with tempfile.TemporaryDirectory(prefix=f"mft-exp-{name}-") as tmp:
        out = Path(tmp)
        cmd = [sys.executable, str(ROOT / "scripts" / "experiments" / f"{name}.py"), "--quick", "--out", str(out),
               "--runs", str(out / "runs"), "--jobs", "2"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: {' '.join(cmd)} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        table = out / f"{name}-quick.csv"
        figure = out / f"exp_{name}-quick.png"
        if not table.is_file():
            sys.exit(f"FAIL: no {table.name}; output:\n{done.stdout[-3000:]}")
        with open(table) as f:
            rows = list(csv.reader(f))
        if rows[0] != columns:
            sys.exit(f"FAIL: {table.name} columns {rows[0]}, expected {columns}")
        if len(rows) - 1 != count:
            sys.exit(f"FAIL: {table.name} has {len(rows) - 1} rows, expected {count}")
        if any(len(r) != len(columns) for r in rows):
            sys.exit(f"FAIL: {table.name} has ragged rows")
        if not figure.is_file() or figure.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            sys.exit(f"FAIL: no PNG figure {figure.name}")
        print(f"{name} --quick: {len(rows) - 1} rows of {len(columns)} columns and {figure.name}: ok")


if __name__ == "__main__":
    main()
