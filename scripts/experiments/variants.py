#!/usr/bin/env python3
"""Attention variants: softmax against ReLU scores, all tokens against the
causal mask ([B]'s open case), on in-context linear regression: the risk
curves, and lambda_min of the NTK at initialisation (K_all, the kernel of the
flow, and K_V), whose positivity [B] ties to linear convergence.

  python3 scripts/experiments/variants.py [--quick] [--update-docs] [--jobs J]

Runs locally only (it needs `mft ntk` runs). Writes variants.csv (attention,
causal, seeds, lambda_min and lambda_max of K_all and K_V at initialisation,
final R and its standard error, R_final / R_0) and exp_variants.png. All
variants share init.sigma_qk = 0.2 (ReLU scores grow the velocity like |x|^3
and blow up in depth at the default 0.5).
"""
import numpy as np

import common
from common import Run

FULL = dict(seeds=[1, 2, 3], M=32, L=4, N=32, steps=200, dtau=0.02)
QUICK = dict(seeds=[1], M=4, L=2, N=8, steps=10, dtau=0.02)
VARIANTS = [("softmax", "false"), ("softmax", "true"), ("relu", "false"), ("relu", "true")]


def main():
    options = common.parser(__doc__).parse_args()
    if options.slurm or options.from_sweep:
        raise SystemExit("error: variants runs `mft ntk`, which the sweep array does not: run it locally")
    size = QUICK if options.quick else FULL
    runs = []
    for attention, causal in VARIANTS:
        for seed in size["seeds"]:
            base = {"data.task": "icl-linear", "data.sequences": size["N"], "init.sigma_v": 0.5,
                    "init.sigma_qk": 0.2, "model.attention": attention, "model.causal": causal,
                    "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed}
            tag = f"{attention}-{'causal' if causal == 'true' else 'all'}-s{seed}"
            for part in ("all", "V"):
                runs.append(Run(f"{tag}-ntk{part}", {**base, "ntk.part": part}, command="ntk"))
            runs.append(Run(f"{tag}-train", {**base, "train.steps": size["steps"], "train.dtau": size["dtau"],
                                             "output.snapshot_every": size["steps"]}))
    paths = common.execute("variants", runs, options)

    import h5py
    rows, curves = [], {}
    for attention, causal in VARIANTS:
        lam, final, ratio = {"all": [], "V": []}, [], []
        for seed in size["seeds"]:
            tag = f"{attention}-{'causal' if causal == 'true' else 'all'}-s{seed}"
            for part in lam:
                with h5py.File(paths[f"{tag}-ntk{part}"], "r") as f:
                    lam[part].append((float(f["ntk"].attrs["lambda_min"]), float(f["ntk"].attrs["lambda_max"])))
            if f"{tag}-train" in paths:
                h, _ = common.history(paths[f"{tag}-train"])
                final.append(h["risk"][-1])
                ratio.append(h["risk"][-1] / h["risk"][0])
                if seed == size["seeds"][0]:
                    curves[(attention, causal)] = h
        r, r_err = common.mean_and_error(final) if final else (np.nan, np.nan)
        rows.append({"attention": attention, "causal": causal, "seeds": len(size["seeds"]),
                     "diverged": len(size["seeds"]) - len(final),
                     "all_min": np.mean([v[0] for v in lam["all"]]), "all_max": np.mean([v[1] for v in lam["all"]]),
                     "V_min": np.mean([v[0] for v in lam["V"]]), "V_max": np.mean([v[1] for v in lam["V"]]),
                     "risk": r, "risk_err": r_err, "reduction": float(np.mean(ratio)) if ratio else np.nan})
    common.write_csv("variants", options, ["attention", "causal", "seeds", "diverged", "all_min", "all_max", "V_min",
                                           "V_max", "risk", "risk_err", "reduction"], rows)

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for (attention, causal), h in curves.items():
        axes[0].semilogy(h["tau"], h["risk"], ls="-" if causal == "false" else "--",
                         label=f"{attention}{', causal' if causal == 'true' else ''}")
    axes[0].set_xlabel("τ")
    axes[0].set_ylabel("risk R")
    axes[0].legend(fontsize=7)
    labels = [f"{r['attention']}\n{'causal' if r['causal'] == 'true' else 'all'}" for r in rows]
    x = np.arange(len(rows))
    axes[1].bar(x - 0.2, [r["all_min"] for r in rows], 0.4, label="λ_min(K_all)")
    axes[1].bar(x + 0.2, [r["V_min"] for r in rows], 0.4, label="λ_min(K_V)")
    axes[1].set_xticks(x)
    axes[1].set_xticklabels(labels, fontsize=8)
    axes[1].set_yscale("log")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    common.save_figure(fig, "variants", options)
    for r in rows:
        print(f"{r['attention']:7} causal={r['causal']:5}: lambda_min K_all {r['all_min']:.3e}, K_V {r['V_min']:.3e}; "
              f"R = {r['risk']:.3e} +- {r['risk_err']:.1e} (x{r['reduction']:.1e} of R0)"
              + (f", {r['diverged']} diverged" if r["diverged"] else ""))


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()
