#!/usr/bin/env python3
"""Causal masking, [B]'s open case, with a counterexample built for it.
[B]'s injectivity argument needs attention to be permutation-equivariant,
which the causal mask breaks. The data (scripts/make_permutation_pairs.py):
P = 4 pairs of sequences of n = 6 tokens in d = 4, each pair the same
tokens in two orders with the same last token, and targets c +- 0.5.
Without the mask the last token's state, and so the prediction, is the same
for both sequences of a pair: K has two equal rows per pair, and R cannot
fall below the irreducible risk (each pair predicted at its mean), which the
driver computes from the tokens. With the mask token i sees tokens 1..i, the
order changes what the last token attends to from the second slice on, and
the pairs can be fitted.

Setting: M = 32, L = 4, softmax, the query readout; K_V and K_all at
initialisation (`mft ntk`); 1000 Euler steps of dtau = 0.05 (tau = 50);
three seeds (the data's seed and init.seed). Then a sweep of Gaussian
translates (data.task = families, gaussian-cov 0:1, d = 2, N = 4, the query
the last token, M = 64, L = 4, n = 16..1024, three seeds: the injectivity
experiment's first design) with the mask on, beside the same sweep without
it.

Criteria, stated before the runs (every seed):
  1. the unmasked run ends at the irreducible risk within 1 %;
  2. the masked kernel is injective: lambda_min(K_V) > 1e-8 (the unmasked
     one is at rounding level);
  3. the masked run's final R is below 1e-6 of the unmasked plateau;
  4. with i.i.d. tokens every prefix measure tends to the same population
     as n grows, so the mask cannot keep the translates' kernel injective:
     their masked lambda_min(K_V) falls with n (the slope over the four
     largest n, +- 2 standard errors, lies below 0).

  python3 scripts/experiments/causal.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs). About 15 minutes on 2 cores (the
unmasked translates run here: section 7 no longer runs this sweep). Writes
causal.csv (one row per pair run: mask, seed, the kernels' extreme
eigenvalues, R at the start and end, the irreducible risk; one row per
translates kernel: mask, n, seed, eigenvalues) and exp_causal.png.
"""
import sys
from pathlib import Path

import numpy as np

import common
import fits
from common import Run

sys.path.insert(0, str(common.SCRIPTS))
from make_permutation_pairs import irreducible_risk, permutation_pairs  # noqa: E402

FULL = dict(seeds=[1, 2, 3], pairs=4, n=6, d=4, gap=0.5, M=32, L=4, steps=1000, dtau=0.05,
            sweep=dict(seeds=[1, 2, 3], M=64, L=4, tokens=[16, 32, 64, 128, 256, 512, 1024]))
QUICK = dict(seeds=[1, 2], pairs=2, n=4, d=2, gap=0.5, M=4, L=2, steps=20, dtau=0.05,
             sweep=dict(seeds=[1], M=4, L=2, tokens=[8, 16, 32]))
TRANSLATES = {"families.kind": "gaussian-cov", "families.values": "0:1", "families.variances": "1:1"}
WINDOW = 4  # the slope's window: the largest four n
MASKS = ("false", "true")
COLUMNS = ["kind", "causal", "n", "seed", "V_min", "V_max", "all_min", "all_max", "risk_start", "risk_end",
           "irreducible"]


def pair_runs(size, folder):
    runs, data = [], {}
    for seed in size["seeds"]:
        data[seed] = permutation_pairs(size["pairs"], size["n"], size["d"], size["gap"], seed)
        path = common.data_file(folder, f"pairs-s{seed}", *data[seed])
        for mask in MASKS:
            base = {"data.task": "file", "data.file": str(path), "model.heads": size["M"], "model.slices": size["L"],
                    "model.causal": mask, "init.seed": seed}
            tag = f"pairs-{'causal' if mask == 'true' else 'all'}-s{seed}"
            for part in ("V", "all"):
                runs.append(Run(f"{tag}-ntk{part}", {**base, "ntk.part": part}, command="ntk"))
            runs.append(Run(f"{tag}-train", {**base, "train.steps": size["steps"], "train.dtau": size["dtau"],
                                             "output.history_every": 10, "output.snapshot_every": size["steps"]}))
    return runs, data


def translates_runs(name, sweep, extra_args=None):
    """The K_V and K_all runs of the translates at every n and seed."""
    runs = []
    for n in sweep["tokens"]:
        for seed in sweep["seeds"]:
            args = {"data.task": "families", **TRANSLATES, "model.d": 2, "model.head_dim": 2, "data.sequences": 4,
                    "data.tokens": n, "model.heads": sweep["M"], "model.slices": sweep["L"], "init.seed": seed,
                    "data.seed": 100 + seed, **(extra_args or {})}
            for part in ("V", "all"):
                runs.append(Run(f"{name}-n{n}-s{seed}-ntk{part}", {**args, "ntk.part": part}, command="ntk"))
    return runs


def translates_rows(name, paths, sweep):
    import h5py
    rows = []
    for n in sweep["tokens"]:
        for seed in sweep["seeds"]:
            row = {"n": n, "seed": seed}
            for part in ("V", "all"):
                with h5py.File(paths[f"{name}-n{n}-s{seed}-ntk{part}"], "r") as f:
                    row[f"{part}_min"] = float(f["ntk"].attrs["lambda_min"])
                    row[f"{part}_max"] = float(f["ntk"].attrs["lambda_max"])
            rows.append(row)
    return rows


def slope(rows, window):
    """The power-law fit of lambda_min(K_V) against n over the largest
    `window` n (every seed's point), or None where a value is not positive."""
    ns = sorted({r["n"] for r in rows})[-window:]
    pts = [(r["n"], r["V_min"]) for r in rows if r["n"] in ns]
    if any(v <= 0 for _, v in pts):
        return None
    return fits.power_law([p[0] for p in pts], [p[1] for p in pts])


def slope_text(fit):
    if fit is None:
        return "no fit: a lambda_min <= 0"
    return f"slope {fit.value:.3f} +- {fit.error:.3f}, interval [{fit.value - 2 * fit.error:.3f}, " \
           f"{fit.value + 2 * fit.error:.3f}]"


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "causal")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("causal" + ("-quick" if options.quick else ""))
    runs, data = pair_runs(size, folder)
    sweep = size["sweep"]
    masked = translates_runs("translates-causal", sweep, {"model.causal": "true"})
    unmasked = translates_runs("translates", sweep)
    paths = common.execute("causal", runs + masked + unmasked, options)

    import h5py
    rows, curves, spectra = [], {}, {}
    for seed in size["seeds"]:
        floor = irreducible_risk(*data[seed])
        for mask in MASKS:
            tag = f"pairs-{'causal' if mask == 'true' else 'all'}-s{seed}"
            row = {"kind": "pairs", "causal": mask, "n": size["n"], "seed": seed, "irreducible": floor}
            for part in ("V", "all"):
                with h5py.File(paths[f"{tag}-ntk{part}"], "r") as f:
                    row[f"{part}_min"] = float(f["ntk"].attrs["lambda_min"])
                    row[f"{part}_max"] = float(f["ntk"].attrs["lambda_max"])
                    if part == "V":
                        spectra[(mask, seed)] = f["ntk/eigenvalues"][()]
            row["risk_start"] = row["risk_end"] = np.nan
            if f"{tag}-train" in paths:
                h, _ = common.history(paths[f"{tag}-train"])
                row["risk_start"], row["risk_end"] = float(h["risk"][0]), float(h["risk"][-1])
                curves[(mask, seed)] = h
            rows.append(row)
    translates = {}
    for name, mask in (("translates", "false"), ("translates-causal", "true")):
        translates[name] = translates_rows(name, paths, sweep)
        for r in translates[name]:
            rows.append({"kind": "translates", "causal": mask, "n": r["n"], "seed": r["seed"],
                         "V_min": r["V_min"], "V_max": r["V_max"], "all_min": r["all_min"],
                         "all_max": r["all_max"], "risk_start": np.nan, "risk_end": np.nan,
                         "irreducible": np.nan})
    common.write_csv("causal", options, COLUMNS, rows)
    plot(rows, curves, spectra, translates, size, options)

    pairs = [r for r in rows if r["kind"] == "pairs"]
    free = [r for r in pairs if r["causal"] == "false"]
    masked_rows = [r for r in pairs if r["causal"] == "true"]
    gaps = [abs(r["risk_end"] / r["irreducible"] - 1) for r in free]
    plateau = {r["seed"]: r["risk_end"] for r in free}
    ratios = [r["risk_end"] / plateau[r["seed"]] for r in masked_rows]
    fit = slope(translates["translates-causal"], WINDOW)
    lines = [
        common.criterion("unmasked R ends at the irreducible risk within 1 %",
                         all(g < 0.01 for g in gaps),
                         "; ".join(f"seed {r['seed']}: R {r['risk_end']:.6g} against {r['irreducible']:.6g} "
                                   f"(relative gap {g:.1e})" for r, g in zip(free, gaps))),
        common.criterion("masked lambda_min(K_V) > 1e-8",
                         all(r["V_min"] > 1e-8 for r in masked_rows),
                         "masked " + ", ".join(f"{r['V_min']:.3e}" for r in masked_rows) + "; unmasked "
                         + ", ".join(f"{r['V_min']:.1e} (of lambda_max {r['V_max']:.2g})" for r in free)),
        common.criterion("masked final R below 1e-6 of the unmasked plateau",
                         all(x < 1e-6 for x in ratios), "R_masked / R_unmasked " + ", ".join(f"{x:.1e}" for x in ratios)),
        common.criterion("masked translates: lambda_min(K_V) falls with n (slope interval below 0)",
                         fit is not None and fit.value + 2 * fit.error < 0, slope_text(fit)),
    ]
    common.write_criteria("causal", options, lines)


def plot(rows, curves, spectra, translates, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    floor = np.mean([r["irreducible"] for r in rows if r["kind"] == "pairs"])
    for (mask, seed), h in sorted(curves.items()):
        axes[0].semilogy(h["tau"], h["risk"], ls="-" if mask == "true" else "--", lw=1,
                         color="C1" if mask == "true" else "C0",
                         label=f"{'causal' if mask == 'true' else 'no mask'}" if seed == size["seeds"][0] else None)
    axes[0].axhline(floor, color="k", ls=":", lw=1, label="irreducible risk (no mask)")
    axes[0].set_xlabel("τ")
    axes[0].set_ylabel("risk R (permutation pairs)")
    for (mask, seed), ev in sorted(spectra.items()):
        axes[1].semilogy(np.arange(1, ev.size + 1), np.maximum(np.abs(ev), 1e-18), "o-" if mask == "true" else "x--",
                         ms=3, lw=0.8, color="C1" if mask == "true" else "C0",
                         label=f"{'causal' if mask == 'true' else 'no mask'}" if seed == size["seeds"][0] else None)
    axes[1].set_xlabel("eigenvalue index (ascending)")
    axes[1].set_ylabel("|eigenvalue| of K_V (pairs)")
    for name, color in (("translates", "C0"), ("translates-causal", "C1")):
        mine = translates[name]
        ns = sorted({r["n"] for r in mine})
        stats = [common.mean_and_error([r["V_min"] for r in mine if r["n"] == n]) for n in ns]
        axes[2].errorbar(ns, [s[0] for s in stats], yerr=[s[1] for s in stats], marker="o", ms=3, capsize=2,
                         color=color, label="causal" if name.endswith("causal") else "no mask")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("tokens per sequence n (Gaussian translates)")
    axes[2].set_ylabel("λ_min(K_V)")
    common.finish_axes(axes)
    common.save_figure(fig, "causal", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()
