#!/usr/bin/env python3
"""Propagation of chaos over long training. [A]'s bound on the distance
between the M-particle system and its mean-field limit (Prop. 3.3 /
Thm 3.1, by Gronwall) grows like e^(C tau) in training time tau, C a
Lipschitz constant of the particles' velocity field. Does the coupling itself
grow like that over long training, with and without weight decay (which
confines the particles)?

Setting: §3's (scripts/experiments/mean_field.py, whose coupling
functions this driver imports): icl-linear with N = 16 sequences of n = 8
tokens, L = 4, init.sigma_v = 0.5, the gradient flow by Euler steps of
dtau = 0.05, 2000 steps (tau = 100), snapshots every 5 of tau. Per seed a
reference of M_ref = 256 heads per slice and runs of M in {16, 32, 64, 128},
each without weight decay and with train.lambda = 0.05; particle m of every
run starts equal to particle m of the reference of its seed (streams keyed
by (seed, l, m)). Seeds 1..10 (101..103 were the pilot's: excluded). M = 8
is left out: in the pilot its largest stable Euler step fell to 0.036 (seed
101, at tau = 6.5), below the step, and it is saturated without decay
(D / displacement 0.62); M = 16's smallest was 0.22, M = 256's 0.265.

The coupling. At every snapshot D(M, tau) = (1/(M L)) sum_{l, m < M}
|theta_lm^(M)(tau) - theta_lm^(ref)(tau)| (mean_field.coupling_distance),
and the scaled distance

    s(M, tau) = sqrt(M) D(M, tau) / sqrt(1 - M/M_ref)

which [A]'s bound holds below C1 e^(C tau) at every M (the reference shares
its first M particles, hence the factor). Beside it the relative coupling
c = s / (the reference's mean particle displacement |theta(tau) - theta(0)|).
A width whose seed-mean D / displacement at the last snapshot is
mean_field.SATURATED (0.5) or more is saturated (D is no longer a small
difference) and left out of the fits, as in §3.

The growth rate. Per seed, log s(M, tau) = a_M + g tau fitted by least
squares over the unsaturated widths and the snapshots tau >= 10 (an
intercept per width, one rate: a seed's widths share its draws, so the
seed's rate is one replicate); its interval is the 95 % Student-t interval
over the seeds (9 dof), and the two treatments are compared seed by seed
(stats.paired). The rate of c is fitted alike and reported, not judged:
under weight decay the displacement grows by the decay of every particle
toward 0 (pilot: 2.8 at tau = 10, 6.7 at tau = 100, against 0.71 without
decay), which pulls c down whatever D does, so the bound's own quantity,
s, is judged. g0 = 0.01: an exponential at 0.01 multiplies s by
e^0.9 = 2.5 over tau = 10..100, while the bound's rate is of the order of
the flow's largest curvature, lambda_max(K_all) / N = 2 / euler_dtau_max,
3.7..7.5 here (the pilot's references' largest stable Euler steps
0.27..0.54): at that rate s would grow by e^(300) or more.

Criteria, stated before the runs (95 % Student-t intervals over the seeds):
  1. without weight decay the per-seed growth rate g of log s over
     tau >= 10 has its interval below g0 = 0.01: the coupling does not grow
     exponentially over long training. Fails if s keeps growing at 0.01 or
     more (chaos amplified by the flow), or if the seeds scatter so that
     the interval reaches g0;
  2. with weight decay lambda = 0.05 the same;
  3. weight decay keeps the coupling growing, paired by seed: g(0.05) - g(0)
     has its interval above 0. Fails if decay confines the coupling
     (a rate at or below the undecayed one: the decayed flow stationary, or
     contracting differences at rate lambda), or if the seeds cannot
     resolve the difference.
Sanity checks (the design): every run starts coupled, D = 0 at tau = 0
exactly; no run diverged; dtau lies below the smallest largest stable
Euler step any run recorded (/history/euler_dtau_max, ntk.every 100).
Measured, not judged: the rate of c, the reference's risk, and the
per-seed log-log slope of D against M at the last snapshot (§3's M^-1/2
after long training).

Power (stats.Plan; the pilot's seeds 101..103 excluded, its widths in this
design's range): the per-seed rates of the pilot spread 1.26e-6 around
1.08e-6 without decay (M = 16..64), 1.43e-3 around 2.62e-3 with decay
(M = 64, the one piloted width in the range), and their paired differences
1.43e-3 around 2.62e-3; 10 seeds give half-widths of 9e-7 against the band
0.01 - 1.1e-6 of criterion 1, 1.0e-3 against 0.01 - 2.62e-3 (2) and 1.0e-3
against the 2.62e-3 that separates the pilot's difference from 0 (3).

What was seen before these were stated. §3's results (mean_field.py,
tau <= 2, M_ref = 2048, ten seeds): D / displacement constant in tau
(0.48, 0.33, 0.25 at M = 16, 32, 64 from tau = 0.5 to 2), the per-seed
slope of D against M -0.457 [-0.49, -0.424]. Then this design's pilot,
seeds 101..103, snapshots every 1 of tau. Without decay to tau = 50 (widths
8..64): the reference's R 2.8e-3 at tau = 2, 1e-9 at tau = 10, 2e-16 at 20,
below 1e-31 from 50 (it interpolates; the particles stop); c constant to
four digits from tau = 10 on (1.54..1.97, 1.94..2.08, 1.98..2.21,
2.04..2.29 at M = 8, 16, 32, 64), having grown by up to 7 % from tau = 1;
D / displacement 0.62, 0.48, 0.35, 0.24 (M = 8 saturated); per-seed rates
of log s over tau = 10..50 (M = 16..64) 2.5e-6, 5.5e-7, 1.8e-7; slope of
D against M at tau = 50 -0.38, -0.48, -0.44. With lambda = 0.05 to
tau = 100 (widths 8 and 64): R 1.5e-3 at tau = 5 and at 100, the objective
still falling (0.071 at tau = 50, 0.054 at 100): not stationary; the
displacement 2.8 at tau = 10, 6.7 at 100; s at M = 64 from 1.39..1.65
(tau = 10) to 1.53..2.50 (tau = 100), growing still at tau >= 50 (rates
1.5e-3..2.1e-3 at M = 64); c from 0.50..0.59 to 0.23..0.37 (rates
-2.7e-3..-5.4e-3 at M = 64); per-seed rates of log s over tau >= 10:
4.2e-3, 1.5e-3, 2.1e-3 at M = 64 (3.7e-3, 0.9e-3, 2.1e-3 fitted with
M = 8); D / displacement 0.08 (M = 8), 0.03 (64). The references' smallest
largest stable Euler step 0.265 (at tau = 0), 0.5..0.59 later; then runs of
M = 8 and 16 to tau = 10 recording it every 10 steps (above). Timing:
1.23e-4 core-seconds per head and step (M = 256: 0.031 s a step).

  python3 scripts/experiments/long_chaos.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

200 runs (10 seeds x 2 decays x 5 widths, 2000 steps each): 1.23e-4
core-s x 496 heads x 2000 steps x 20 = 2440 core-seconds from the pilot's
rate, about 20 minutes on 2 free cores (the pilot got a third of its
cores' time on the shared development machine: up to an hour there);
about 1.3 GB of run files (33 MB per reference). Writes long_chaos.csv (per
decay, width and snapshot: the seeds' s and c with their intervals,
D / displacement, the displacement and the reference's risk; every row its
runs' mft version and creation time), long_chaos-criteria.txt and
exp_long_chaos.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import common
import stats
from common import Run
from mean_field import SATURATED, coupling_distance, interval_or_nan, particles

FULL = dict(widths=[16, 32, 64, 128], reference=256, L=4, N=16, n=8, seeds=list(range(1, 11)), decays=[0.0, 0.05],
            dtau=0.05, steps=2000, snapshot=100, ntk=100, fit_from=10.0)
QUICK = dict(widths=[16, 32], reference=128, L=2, N=8, n=6, seeds=[1, 2, 3], decays=[0.0, 0.05],
             dtau=0.02, steps=50, snapshot=10, ntk=10, fit_from=0.4)
# The growth rate below which the coupling does not grow exponentially:
# e^(0.01 x 90) = 2.5 over tau = 10..100 (the docstring).
G0 = 0.01
# The pilot (seeds 101..103, excluded): the per-seed rates of log s, their
# mean and standard deviation per decay, and of the paired difference.
PILOT = dict(seeds=3, rate={0.0: (1.082e-06, 1.256e-06), 0.05: (2.617e-03, 1.433e-03)},
             difference=(2.616e-03, 1.431e-03))
COLUMNS = ["lambda", "M", "tau", "seeds", "distance", "distance_low", "distance_high", "relative", "relative_low",
           "relative_high", "to_displacement", "saturated", "displacement", "risk"]


def name(M, decay, seed):
    return f"M{M}-lam{decay:g}-s{seed}"


def measure(paths, size, seeds):
    """Per decay: the snapshots' tau and, per seed (rows), the scaled
    distance s and the relative coupling c per width, D / displacement, the
    reference's displacement and risk, the largest D at tau = 0 and the
    smallest stable Euler step any run recorded."""
    ref = size["reference"]
    out = {}
    for decay in size["decays"]:
        m = dict(s={M: [] for M in size["widths"]}, c={M: [] for M in size["widths"]},
                 ratio={M: [] for M in size["widths"]}, displacement=[], risk=[], start=0.0, stable=np.inf)
        for seed in seeds:
            ref_path = paths[name(ref, decay, seed)]
            run = common.mft_io.open_run(str(ref_path))
            taus = np.asarray(run.snapshot_taus, float)
            run.close()
            # the reference's snapshots, read once for all widths
            big = [particles(ref_path, k)[0] for k in range(len(taus))]
            moved = np.array([coupling_distance(b, big[0]) for b in big])
            history = common.history(ref_path)[0]
            rows = [int(np.argmin(np.abs(np.asarray(history["tau"]) - t))) for t in taus]
            m["risk"].append(np.asarray(history["risk"], float)[rows])
            m["displacement"].append(moved)
            for M in size["widths"] + [ref]:
                m["stable"] = min(m["stable"], float(np.nanmin(common.history(paths[name(M, decay, seed)])[0]
                                                               ["euler_dtau_max"])))
            for M in size["widths"]:
                path = paths[name(M, decay, seed)]
                run = common.mft_io.open_run(str(path))
                assert np.allclose(run.snapshot_taus, taus), "a run's snapshots must be its reference's"
                run.close()
                D = np.array([coupling_distance(particles(path, k)[0], big[k]) for k in range(len(taus))])
                m["start"] = max(m["start"], D[0])
                with np.errstate(divide="ignore", invalid="ignore"):
                    m["ratio"][M].append(D / moved)
                    s = np.sqrt(M) * D / np.sqrt(1 - M / ref)
                    m["s"][M].append(s)
                    m["c"][M].append(s / moved)
        m["taus"] = taus
        for key in ("s", "c", "ratio"):
            m[key] = {M: np.array(v) for M, v in m[key].items()}
        m["displacement"], m["risk"] = np.array(m["displacement"]), np.array(m["risk"])
        out[decay] = m
    return out


def window(m, widths):
    """The unsaturated widths: seed-mean D / displacement at the last
    snapshot below SATURATED."""
    return [M for M in widths if np.mean(m["ratio"][M][:, -1]) < SATURATED]


def growth(m, widths, fit_from, key="s"):
    """Per seed, log y = a_M + g tau over the widths and the snapshots
    tau >= fit_from (one intercept per width, one rate g): the PerSeedFit,
    or the reason there is none."""
    keep = m["taus"] >= fit_from - 1e-9
    if not widths or keep.sum() < 2:
        return f"no fit: {len(widths)} unsaturated widths, {int(keep.sum())} snapshots at tau >= {fit_from:g}"
    Y = np.concatenate([m[key][M][:, keep] for M in widths], axis=1)
    if not np.all(np.isfinite(Y) & (Y > 0)):
        return "no fit: a value <= 0 or not finite"
    taus = m["taus"][keep]
    columns = [np.repeat(np.eye(len(widths))[i], keep.sum()) for i in range(len(widths))] + [np.tile(taus, len(widths))]
    return stats.per_seed_fits(columns, np.log(Y), tuple(f"a{M}" for M in widths) + ("g",))


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    base = {"data.task": "icl-linear", "data.sequences": size["N"], "data.tokens": size["n"], "init.sigma_v": 0.5,
            "model.slices": size["L"], "train.steps": size["steps"], "train.dtau": size["dtau"],
            "output.snapshot_every": size["snapshot"], "ntk.every": size["ntk"]}
    models = size["widths"] + [size["reference"]]
    runs = [Run(name(M, decay, s), {**base, "model.heads": M, "init.seed": s, "train.lambda": decay})
            for s in size["seeds"] for decay in size["decays"] for M in models]
    if not options.from_sweep and not options.slurm:
        print(f"[long_chaos] {len(runs)} runs; the full mode takes about 20 minutes on 2 free cores", flush=True)
    paths = common.execute("long_chaos", runs, options)
    # A seed is kept when every run of it, both decays, finished (a
    # diverged run would leave its curves incomplete: counted, not hidden).
    seeds = [s for s in size["seeds"] if all(name(M, d, s) in paths for M in models for d in size["decays"])]
    diverged = len(runs) - len(paths)
    data = measure(paths, size, seeds)

    rows = []
    for decay, m in data.items():
        for M in size["widths"]:
            for k in range(1, len(m["taus"])):
                s, s_low, s_high = interval_or_nan(m["s"][M][:, k])
                c, c_low, c_high = interval_or_nan(m["c"][M][:, k])
                ratio = float(np.mean(m["ratio"][M][:, k]))
                rows.append({"lambda": decay, "M": M, "tau": float(m["taus"][k]), "seeds": len(seeds), "distance": s,
                             "distance_low": s_low, "distance_high": s_high, "relative": c, "relative_low": c_low,
                             "relative_high": c_high, "to_displacement": ratio, "saturated": int(ratio >= SATURATED),
                             "displacement": float(np.mean(m["displacement"][:, k])),
                             "risk": float(np.mean(m["risk"][:, k])),
                             "runs": [paths[name(X, decay, sd)] for sd in seeds for X in (M, size["reference"])]})
    common.write_csv("long_chaos", options, COLUMNS, rows)
    for r in rows:
        if r["tau"] in (size["fit_from"], float(data[r["lambda"]]["taus"][-1])):
            print(f"lambda={r['lambda']:<5g} M={r['M']:<3} tau={r['tau']:<5g} s = {r['distance']:.4f} "
                  f"[{r['distance_low']:.4f}, {r['distance_high']:.4f}], c = {r['relative']:.4f}, "
                  f"D/displacement {r['to_displacement']:.3f}, displacement {r['displacement']:.3f}, "
                  f"R_ref {r['risk']:.2e}", flush=True)
    windows = {decay: window(m, size["widths"]) for decay, m in data.items()}
    fits = {decay: growth(m, windows[decay], size["fit_from"]) for decay, m in data.items()}
    lines = plans(size, seeds) + verdicts(data, fits, windows, size, seeds, diverged, len(runs))
    measured(data, windows, size)
    common.write_criteria("long_chaos", options, lines)
    plot(data, fits, windows, size, options)


def plans(size, seeds):
    n = max(2, len(seeds))
    lines = [stats.Plan(f"lambda = {decay:g}: the rate g below {G0:g}", G0 - PILOT["rate"][decay][0],
                        PILOT["rate"][decay][1], PILOT["seeds"], n).line() for decay in size["decays"]]
    mean, spread = PILOT["difference"]
    lines.append(stats.Plan("the paired difference g(decay) - g(0) above 0", mean, spread, PILOT["seeds"], n).line())
    return lines


def seed_text(values, digits=3):
    return ", ".join(f"{v:.{digits}g}" for v in values)


def verdicts(data, fits, windows, size, seeds, diverged, total):
    none, decay = size["decays"]
    lines = [
        common.sanity("every run starts coupled: D = 0 at tau = 0", all(m["start"] == 0.0 for m in data.values()),
                      f"largest D at tau = 0: {max(m['start'] for m in data.values()):.3g} over "
                      f"{len(seeds) * len(size['widths']) * len(data)} runs"),
        common.sanity("no run diverged", diverged == 0, f"{diverged} of {total} diverged; {len(seeds)} seeds kept"),
        common.sanity("dtau below every run's largest stable Euler step (/history/euler_dtau_max)",
                      all(size["dtau"] < m["stable"] for m in data.values()),
                      "; ".join(f"lambda {d:g}: smallest {m['stable']:.4g}" for d, m in data.items())
                      + f" against dtau {size['dtau']:g}")]
    taus = f"tau >= {size['fit_from']:g}"
    for d, what in ((none, "without weight decay"), (decay, f"with weight decay lambda = {decay:g}")):
        fit = fits[d]
        rate_c = growth(data[d], windows[d], size["fit_from"], key="c")
        if isinstance(fit, str):
            ok, numbers = False, fit
        else:
            ok = fit["g"].below(G0)
            numbers = (f"g = {fit['g'].text()} over {taus}, M = {', '.join(map(str, windows[d]))} "
                       f"({len(seeds)} seeds); per seed {seed_text(fit.estimates[:, -1])}"
                       + ("" if isinstance(rate_c, str) else f"; the rate of c (not judged) {rate_c['g'].text()}"))
        lines.append(common.criterion(f"{what} the per-seed growth rate g of log(sqrt(M) D / sqrt(1 - M/M_ref)) "
                                      f"against tau over {taus} has its interval below g0 = {G0:g}", ok, numbers))
    if isinstance(fits[none], str) or isinstance(fits[decay], str):
        ok, numbers = False, "no paired difference: a rate is missing"
    else:
        diff = stats.paired(fits[decay].estimates[:, -1], fits[none].estimates[:, -1])
        ok = diff.above(0.0)
        numbers = f"g({decay:g}) - g(0) = {diff.text()}; per seed " + \
            seed_text(fits[decay].estimates[:, -1] - fits[none].estimates[:, -1])
    lines.append(common.criterion(f"weight decay keeps the coupling growing: paired by seed, g(lambda = {decay:g}) - "
                                  "g(0) has its interval above 0", ok, numbers))
    return lines


def measured(data, windows, size):
    """Not judged: the reference's risk and the slope of D against M at the
    last snapshot (§3's M^-1/2, after long training)."""
    for decay, m in data.items():
        k = np.argmin(np.abs(m["taus"] - size["fit_from"]))
        text = f"measured: lambda {decay:g}: R_ref {np.mean(m['risk'][:, k]):.2e} at tau = {m['taus'][k]:g}, " \
               f"{np.mean(m['risk'][:, -1]):.2e} at tau = {m['taus'][-1]:g}"
        widths = windows[decay]
        if len(widths) >= 2 and m["s"][widths[0]].shape[0] >= 2:
            D = np.array([m["s"][M][:, -1] * np.sqrt(1 - M / size["reference"]) / np.sqrt(M) for M in widths]).T
            text += f"; slope of D against M at tau = {m['taus'][-1]:g}: " + \
                stats.per_seed_slopes(widths, D)["slope"].text() + f" (M = {widths[0]}..{widths[-1]})"
        print(text, flush=True)


def plot(data, fits, windows, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.1))
    styles = {d: ("-", "o") if d == 0 else ("--", "s") for d in data}
    for decay, m in data.items():
        taus = m["taus"][1:]
        line, marker = styles[decay]
        for i, M in enumerate(size["widths"]):
            for ax, key in ((axes[0], "s"), (axes[1], "c")):
                values = m[key][M][:, 1:]
                mid = values.mean(axis=0)
                err = stats.t_quantile(stats.LEVEL, values.shape[0] - 1) * values.std(axis=0, ddof=1) \
                    / np.sqrt(values.shape[0]) if values.shape[0] >= 2 else None
                sat = "" if M in windows[decay] else " (saturated)"
                ax.errorbar(taus, mid, yerr=err, ls=line, marker=marker, ms=3, capsize=2, color=f"C{i}",
                            label=f"M = {M}, lambda = {decay:g}{sat}")
        axes[2].plot(m["taus"], m["risk"].mean(axis=0), ls=line, color="k", label=f"R_ref, lambda = {decay:g}")
        axes[2].plot(m["taus"][1:], m["displacement"][:, 1:].mean(axis=0), ls=line, color="C3",
                     label=f"displacement, lambda = {decay:g}")
    for ax in axes[:2]:
        ax.axvline(size["fit_from"], color="0.5", lw=0.8, ls=":")
        ax.set_xlabel("tau")
        ax.set_yscale("log")
    axes[0].set_ylabel("s = sqrt(M) D / sqrt(1 - M/M_ref)")
    axes[1].set_ylabel("c = s / displacement of the reference")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("tau")
    axes[2].set_ylabel("reference: risk, mean displacement")
    ax = axes[3]
    for j, (decay, fit) in enumerate(fits.items()):
        if isinstance(fit, str):
            continue
        g = fit.estimates[:, -1]
        ax.plot(np.full(g.size, j) + np.linspace(-0.15, 0.15, g.size), g, "o", ms=4, color=f"C{j}",
                label=f"per seed, lambda = {decay:g}")
        iv = fit["g"]
        ax.errorbar([j + 0.3], [iv.value], yerr=[[iv.value - iv.low], [iv.high - iv.value]], fmt="ks", capsize=3)
    ax.axhline(G0, color="C3", ls="--", lw=0.8, label=f"g0 = {G0:g} (criteria 1, 2)")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xticks(range(len(fits)), [f"lambda = {d:g}" for d in fits])
    ax.set_ylabel(f"growth rate g of log s over tau >= {size['fit_from']:g}")
    ax.set_yscale("symlog", linthresh=1e-5)
    fig.suptitle(f"M_ref = {size['reference']}, L = {size['L']}; error bars: 95 % Student-t over the seeds", fontsize=9)
    common.finish_axes(axes, legend_size=6)
    common.save_figure(fig, "long_chaos", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()
