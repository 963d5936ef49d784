"""Runs one experiment driver's --quick mode into a fresh folder and checks
the shape of what it wrote: the CSV's columns and row count, a PNG figure,
and, for the drivers that state criteria, as many verdict lines
(`criterion: ...: holds|fails (...)` and `sanity: ...`) as it states,
printed and written alike. Not the
science: the full runs and their criteria lines in docs/EXPERIMENTS.md.

  python3 tests/experiments/check_quick.py DRIVER
"""
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# driver: (columns, rows of the quick CSV)
EXPECTED = {
    "icl": (["method", "M", "L", "seeds", "diverged", "validation", "test_ratio", "test_low", "test_high",
             "to_one_step", "to_one_step_low", "to_one_step_high", "last_fall", "last_fall_low", "last_fall_high",
             "chosen", "mft_version", "created"], 4),
    "width_depth": (["sweep", "M", "L", "seeds", "diverged", "dtau", "tau", "catapults", "stable_dtau", "squared_dtau",
                     "largest_jump", "risk", "risk_low", "risk_high", "end_risk", "change", "change_low", "change_high",
                     "separated_share", "ending", "train_acc", "validation", "test_acc", "test_acc_low",
                     "test_acc_high", "chosen", "mft_version", "created"], 4),
    "mean_field": (["sweep", "M", "L", "tau", "seeds", "corrected", "corrected_low", "corrected_high", "relative",
                    "saturated", "loss_bias", "loss_bias_low", "loss_bias_high", "mft_version", "created"], 9),
    "ntk_rate": (["case", "scale", "seed", "N", "dtau", "all_min", "all_max", "V_min", "risk_start", "delta",
                  "frobenius", "lambda_min_ratio", "lambda_max_ratio", "near", "ratio_min", "ratio_max",
                  "window_rows", "agrees", "bound_V", "bound_low", "bound_high", "rate_min", "rate_max", "margin",
                  "within", "final_risk", "diverged", "mft_version", "created"], 8),
    "injectivity": (["family", "n", "seed", "V_min", "V_max", "cgf_margin", "cgf_population", "radius", "mft_version",
                     "created"], 32),
    "causal": (["kind", "causal", "n", "seed", "V_min", "V_max", "all_min", "all_max", "risk_start", "risk_end",
                "irreducible", "mft_version", "created"], 20),
    "weight_decay": (["M", "lambda", "tau", "seeds", "diverged", "extended", "extended_again", "risk", "risk_low",
                      "risk_high", "ratio", "ratio_low", "ratio_high", "objective", "objective_low", "objective_high",
                      "norm2", "drift_max", "threshold", "stationary", "mft_version", "created"], 10),
    "methods": (["task", "method", "dtau", "seeds", "diverged", "euler_margin", "risk", "risk_low", "risk_high",
                 "change", "change_low", "change_high", "ending", "separated", "equipartition", "equipartition_low",
                 "equipartition_high", "validation", "held_out", "held_out_low", "held_out_high", "to_flow",
                 "to_flow_low", "to_flow_high", "chosen", "mft_version", "created"], 10),
    "variants": (["attention", "sigma_qk", "seeds", "diverged", "entropy", "entropy_low", "entropy_high", "all_min",
                  "all_max", "all_trace", "V_min", "V_max", "conditioning", "conditioning_low", "conditioning_high",
                  "dtau", "risk", "risk_low", "risk_high", "reduction", "reduction_low", "reduction_high", "ending",
                  "mft_version", "created"], 6),
    "size_data": (["M", "N", "seeds", "diverged", "test_ratio", "test_ratio_low", "test_ratio_high", "to_online",
                   "to_online_low", "to_online_high", "half_width", "half_width_last_row", "against_online",
                   "train_risk", "mft_version", "created"], 6),
    "d_and_m": (["d", "M", "seeds", "tau", "risk_ratio", "displacement", "distance", "relative", "relative_low",
                 "relative_high", "saturated", "mft_version", "created"], 6),
    "lazy": (["series", "M", "alpha", "seeds", "change", "change_low", "change_high", "frobenius", "frobenius_low",
              "frobenius_high", "top_share", "displacement", "risk", "mft_version", "created"], 10),
    "langevin": (["quantity", "T", "dtau", "seeds", "diverged", "value", "low", "high", "model", "objective",
                  "risk", "stationarity", "mft_version", "created"], 13),
    "clustering": (["horizon", "d", "n", "beta", "T", "sequences", "clusters_mean", "clusters_min", "clusters_max",
                    "one_cluster", "energy_ratio", "plateaus", "point_fit", "share_fit", "radius", "lifetime_median",
                    "lifetime_geomean", "censored", "floored", "held_out", "exponential_geomean", "power_geomean",
                    "drift", "mft_version", "created"], 13),
    "trained_clusters": (["model", "over", "replicates", "s", "initial_cos", "trained_cos", "rise", "rise_low",
                          "rise_high", "trained_min_cos", "trained_clusters", "one_cluster", "mft_version", "created"],
                         18),
    "precision": (["quantity", "seed", "tau", "double", "mixed", "difference", "other_ranks", "floor", "mixed_changed",
                   "ranks_changed", "mft_version", "created"], 10),
    "induction": (["M", "L", "seeds", "diverged", "gap", "gap_low", "gap_high", "tau_star", "tau_star_low",
                   "tau_star_high", "reached", "previous_token", "induction", "probe_induction", "mft_version",
                   "created"], 3),
    "basin": (["M", "n", "seed", "N", "dtau", "all_min", "all_max", "V_min", "V_max", "V_bound", "V_definite",
               "risk_one", "t_lin", "lin_over_bound", "runs_made", "scale_in", "rho_in", "scale_out", "rho_out",
               "scale_star", "risk_star", "euler_margin", "identity", "diverged", "mft_version", "created"], 6),
    "long_chaos": (["lambda", "M", "tau", "seeds", "distance", "distance_low", "distance_high", "relative",
                    "relative_low", "relative_high", "to_displacement", "saturated", "displacement", "risk",
                    "mft_version", "created"], 20),
    "causal_injectivity": (["part", "family", "readout", "causal", "n", "M", "seed", "V_min", "V_max", "cgf_margin",
                            "mft_version", "created"], 56),
    "published_scheme": (["setting", "k", "dt", "difference", "mft_error", "rescaled_error", "published_error",
                          "mft_version", "created"], 4),
}
# driver: the number of verdicts (criteria and sanity checks) it states
CRITERIA = {"icl": 4, "width_depth": 10, "mean_field": 2, "size_data": 6, "weight_decay": 4, "methods": 10,
            "ntk_rate": 7, "injectivity": 5, "causal": 7, "variants": 4, "lazy": 6, "langevin": 7, "d_and_m": 3,
            "clustering": 7, "trained_clusters": 5, "published_scheme": 4,
            "precision": 4, "induction": 7, "basin": 6, "long_chaos": 6, "causal_injectivity": 9}


def main():
    name = sys.argv[1]
    columns, count = EXPECTED[name]
    with tempfile.TemporaryDirectory(prefix=f"mft-exp-{name}-") as tmp:
        out = Path(tmp)
        cmd = [sys.executable, str(ROOT / "scripts" / "experiments" / f"{name}.py"), "--quick", "--out", str(out),
               "--runs", str(out / "runs"), "--jobs", "2"]
        # a driver that breaks shows its traceback here (the tools' boundary prints one line otherwise)
        done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MFT_TRACEBACK="1"))
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
        stated = ""
        if name in CRITERIA:
            sys.path.insert(0, str(ROOT / "scripts" / "experiments"))
            from common import parse_verdicts
            printed = parse_verdicts(done.stdout)
            written_path = out / f"{name}-quick-criteria.txt"
            written = parse_verdicts(written_path.read_text()) if written_path.is_file() else []
            if len(printed) != CRITERIA[name] or written != printed:
                sys.exit(f"FAIL: {name} printed {len(printed)} verdict lines and wrote {len(written)}, expected "
                         f"{CRITERIA[name]} alike; output:\n{done.stdout[-3000:]}")
            kinds = [kind for kind, *_ in printed]
            stated = (f", {kinds.count('criterion')} criteria and {kinds.count('sanity')} sanity checks "
                      f"({', '.join(v for _, _, v, _ in printed)})")
        print(f"{name} --quick: {len(rows) - 1} rows of {len(columns)} columns and {figure.name}{stated}: ok")


if __name__ == "__main__":
    main()
