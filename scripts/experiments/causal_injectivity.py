#!/usr/bin/env python3
"""Injectivity under the causal mask, the case [B] leaves open. [B]'s
theorem (section 7) needs permutation equivariance: without a mask a
sequence reaches the kernel only through its token measure, and K_V is
positive definite on the population measures exactly when their
log-sum-exp functions are independent modulo affine functions. With the
mask token j attends to its prefix x_1..x_j, so a sequence is the path of
its prefix measures mu_i(t) (t = j/n), and the question becomes whether the
prefixes' log-sum-exp functions, one per (sequence, position), keep the
kernel injective where the whole measures cannot.

Which positions the kernel sees decides it. At the initial law V has mean
0 and is independent of Q, K, so the mean-field velocity (1/M) sum_m V_m
attn_m vanishes, and so does its derivative in the tokens: the tokens do
not move, and J_V of a position is its attention average over the initial
tokens it sees. With the query readout only the last position is read,
and it sees every token: the masked limit kernel is the unmasked one. The
mask acts through the velocity, of order M^-1/2 at M heads, so two
sequences' masked rows differ by that much and lambda_min ~ 1/M (section
9's injective masked pairs are a finite-width effect). With the mean
readout (yhat the mean over positions of the last coordinate) every
position's attention average over its own prefix enters J_V: the masked
limit kernel sees the prefix measures, the unmasked one only mu_i(1).

Part 1, families against n (mean readout; d = d_h = 2, N = 3 sequences,
n tokens, no query). Components N(m_k, S_k), m_k = (cos, sin) of 90, 210,
330 degrees, S_k = R_k diag(0.8, 0.2) R_k^T (major axis radial): E|x|^2
= 2, and not translates of one another.
  orders  sequence i is three blocks of n/3 tokens (sizes differing by at
          most one) from the components i, i+1, i+2 (mod 3) in that order:
          one population measure, the equal mixture, for every sequence
          (unmasked: [B]'s degenerate case), three prefix paths. The
          first-order part of the masked mean readout, the blocks' means
          weighted 0.70, 0.24, 0.06 (the integrals of log 1/t over the
          thirds), gives three vectors of R^2 summing to 0: the kernel's
          weakest direction (1, 1, 1) rests on the non-affine part of the
          prefixes' log-sum-exp functions, as in [B];
  iid     every token from the equal mixture: one measure at every prefix
          (the control: the mask alone).
Nested samples with common random numbers: per family and seed one draw
(orders: a draw per sequence and block; iid: per sequence), the sequence
at n its first tokens, n = 16, 32, .., 2048; the masked and unmasked kernel
of a seed share its tokens and particles (init.seed): a paired design.
M = 64, L = 4, sigma_qk = 0.5, seeds 11..22. `mft ntk --cgf` at radius 1.1
(r90 of |K^T Q x| over the initial law and these tokens, 1.107) gives K_V
and the empirical margin of the whole sequences, which falls with n for
both families (the unmasked test sees no difference); the driver evaluates
the closed-form prefix log-sum-exp functions at the same points (sanity
b). The fit, as section 7's (injectivity.limit_fit): per seed and cell,
lambda_min(n) = lambda_inf + c/n over n >= 64; 95 % Student-t intervals
over the seeds (11 dof); the mask's effect as the paired difference of a
seed's two lambda_inf.

Part 2, width (section 9's permutation pairs, its generator
scripts/make_permutation_pairs.py: 4 pairs of n = 6 tokens in d = 4, the
same tokens in two orders with the same last token; L = 4; seeds 11..22,
the pairs' draw and init.seed): K_V at M = 16, 64, 256, 1024, with the
query and the mean readout, masked and unmasked. Per seed and readout the
slope of the masked log lambda_min(K_V) on log M (stats.per_seed_slopes).

Sanity checks (of the design and of equivariance; they can hardly fail):
  a. the unmasked pairs' kernel is singular to rounding, |lambda_min(K_V)|
     < 1e-12 lambda_max, at every seed, width and readout;
  b. the orders differ in their prefixes and not in their measure: at
     mft's points the population margins of the orders' prefixes of
     fraction 1/3 and 2/3 are at least 0.05, of the whole sequences below
     1e-8 (every seed).
Criteria, stated before the runs (BAND = 0.005, a quarter of the pilot's
masked orders limit, 0.0214, rounded down: a limit inside it is told apart
from the injective one):
  1. orders, masked: lambda_inf's interval lies above 0 (a bound);
  2. orders, unmasked: lambda_inf's interval lies inside [-BAND, BAND] (an
     equivalence: [B]'s degeneracy, one measure);
  3. orders: the paired difference masked - unmasked of lambda_inf has its
     interval above 0 (a bound);
  4. iid, masked: lambda_inf inside [-BAND, BAND] (the mask alone does not
     keep one prefix path's sequences apart);
  5. iid, unmasked: lambda_inf inside [-BAND, BAND] (the control);
  6. pairs, query readout: the masked slope on log M lies inside
     [-1.25, -0.75] (lambda_min ~ 1/M: a finite-width effect);
  7. pairs, mean readout: the masked slope on log M lies inside
     [-0.25, 0.25] (a mean-field effect, flat in M).
Each can fail: (1) if the masked orders' lambda_min falls to 0 with n as
the degenerate cells' does (the limit kernel blind to the prefix paths), or
the seeds scatter to 0; (2, 5) if an unmasked lambda_min levels off or
falls slower than 1/n, which the c/n fit leaves in lambda_inf, or the
seeds scatter beyond the band; (3) if the mask does not raise lambda_inf
seed by seed; (4) if i.i.d. sequences stay apart under the mask (their
early positions' prefixes differ at every n: a fall slower than 1/n would
show it), or scatter; (6) if the masked pairs' lambda_min levels off with
M under the query readout (a mean-field mask effect, against the argument
above) or falls faster than 1/M; (7) if under the mean readout it falls or
grows with M (a finite-width effect after all).

Power (stats.Plan; the pilot below, its seeds excluded from the verdicts):
the per-seed lambda_inf (fitted over n = 64..1024, the pilot's window, a
wider extrapolation than the run's, so its spreads are conservative)
spread 0.00469 (orders masked, mean 0.0214), 0.00095 (orders unmasked),
0.00339 (iid masked), 0.00289 (iid unmasked) over 4 seeds; 12 seeds give
half-widths of 0.0030 against the distance 0.0214 (criterion 1), 0.0006,
0.0022, 0.0018 against the band 0.005 (2, 4, 5; the iid masked mean
0.0025 plus its half-width nears the band: a close test); the paired
difference spread 0.0052 around 0.0208: 0.0033 against 0.0208 (3); the
pairs' slopes spread 0.140 (query, mean -1.013) and 0.029 (mean readout,
mean 0.0005) over 5 seeds: 0.089 and 0.019 against 0.25 (6, 7).

What was seen before these were stated: a first version (seed 1, tokens
of E|x|^2 = 1/2 as section 7's, cgf radius 0.55): with section 7's query
token and readout at n = 512, the masked orders' lambda_min(K_V) 2.7e-4
against 1.5e-4 unmasked (lambda_max 0.024); with the mean readout over
n = 16..1024 the masked orders' 1.0e-4..1.6e-4 (lambda_max 0.12..0.21)
against the masked iid's 3.8e-5 at n = 1024, falling slowly: too close to
tell apart, so the tokens were scaled to E|x|^2 = 2 (the attention's
non-affine part grows with the scores); there, seed 1: masked orders 0.013
(n = 256) and 0.019 (n = 1024), masked iid 0.0060 and 0.0010. The query
readout at n = 256 (orders, seed 1): masked - unmasked lambda_min 4.7e-3
(M = 16), 6.5e-3 (64), 2.8e-4 (256), which with the argument above led to
part 2. The pilot: part 1 at seeds 1..4, n = 16..1024 (its iid tokens drawn
token by token, the same law): lambda_inf per seed 0.0183, 0.0166, 0.0243,
0.0264 (orders masked; lambda_min at n = 1024 0.019..0.025, lambda_max
0.49..0.57), 0.0009, 0.0009, 0.0015, -0.0007 (orders unmasked), 0.0029,
-0.0002, 0.0072, 0.0002 (iid masked), -0.0006, -0.0001, 0.0058, 0.0016
(iid unmasked); lambda_min at n = 1024 of the three degenerate cells
2.0e-4..3.3e-3 (lambda_max 0.05..0.08); mft's whole-sequence margins at
n = 1024 0.005..0.05. Part 2 at seeds 1..5: masked query slopes -0.886,
-1.082, -0.843, -1.157, -1.098 (lambda_min at M = 1024 3.7e-5..4.1e-4),
mean-readout slopes 0.029, -0.022, -0.004, -0.033, 0.032 (lambda_min
0.010..0.054 at every M); unmasked |lambda_min|/lambda_max at most 2.7e-16.

  python3 scripts/experiments/causal_injectivity.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs): 384 kernels of the families (2 x 2
masks x 12 seeds x 8 n) and 192 of the pairs. About 27 CPU minutes from
the pilot's rate (per seed 33 s of a core for the four curves to n = 1024,
each kernel at 2048 four times one at 1024: 130 s with n = 2048; the pairs
under 2 s): 14 minutes on 2 free cores, up to 30 on shared ones; one
kernel at n = 2048 holds about 3 GiB. Writes causal_injectivity.csv (part,
family, readout, mask, n, M, seed, K_V's extreme eigenvalues, mft's
whole-sequence margin, and every row its run's mft version and creation
time) and exp_causal_injectivity.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import sys
from pathlib import Path

import numpy as np

import common
import stats
from common import Run
from injectivity import limit_fit, margin, rotation

sys.path.insert(0, str(common.SCRIPTS))
from make_permutation_pairs import permutation_pairs  # noqa: E402

D, HEAD_DIM, SIGMA_QK = 2, 2, 0.5
# The three components: N(m_k, S_k), m_k = (cos, sin) of ANGLES[k], S_k =
# R_k diag(AXES) R_k^T (major axis radial): not translates of one another
# (their log-sum-exp functions differ in the quadratic part); E|x|^2 = 2.
ANGLES = (90.0, 210.0, 330.0)
MEAN_RADIUS, AXES = 1.0, (0.8, 0.2)
FAMILIES = ("orders", "iid")
MASKS = ("true", "false")
READOUTS = ("query", "mean")  # the pairs' two readouts (the families: mean)
STREAM = 23  # the families' draws: default_rng([STREAM, family, seed])
CGF_RADIUS = 1.1  # r90 of the scores |K^T Q x| over the initial law and these tokens (1.107)
SEEDS = list(range(11, 23))  # 1..4 (families) and 1..5 (pairs): the pilot, excluded
FULL = dict(seeds=SEEDS, M=64, L=4, tokens=[16, 32, 64, 128, 256, 512, 1024, 2048], fit_from=64,
            pairs=dict(pairs=4, n=6, d=4, gap=0.5, L=4, widths=[16, 64, 256, 1024]))
QUICK = dict(seeds=[1, 2], M=4, L=2, tokens=[8, 16, 32, 64], fit_from=16,
             pairs=dict(pairs=2, n=4, d=2, gap=0.5, L=2, widths=[4, 16, 64]))
PREFIXES = (1 / 3, 2 / 3, 1.0)  # sanity b: the orders' prefix measures of these fractions
MARGIN, ROUNDING, SINGULAR = 0.05, 1e-8, 1e-12  # sanity b (O(1) against rounding), sanity a
BAND = 0.005  # criteria 2, 4, 5: a quarter of the pilot's masked orders limit (0.0214), rounded down
EXPONENT, SLOPE_BAND = -1.0, 0.25  # criterion 6: lambda_min ~ 1/M; 6, 7: the slopes' band
# The pilot (seeds 1..4 of the families, n = 16..1024, fitted over
# n = 64..1024; seeds 1..5 of the pairs at these widths): per cell the mean
# and spread over seeds of the fitted lambda_inf, of the paired difference,
# and of the pairs' slopes.
PILOT = dict(seeds=4, pair_seeds=5,
             mean={("orders", "true"): 0.021378, ("orders", "false"): 6.17e-4, ("iid", "true"): 2.51e-3,
                   ("iid", "false"): 1.66e-3},
             spread={("orders", "true"): 4.688e-3, ("orders", "false"): 9.450e-4, ("iid", "true"): 3.390e-3,
                     ("iid", "false"): 2.894e-3},
             difference=(0.020760, 5.209e-3), slope_spread=dict(query=0.1396, mean=0.02928))
COLUMNS = ["part", "family", "readout", "causal", "n", "M", "seed", "V_min", "V_max", "cgf_margin"]


def components():
    """(means (3, d), square roots A_k of the covariances S_k = A_k A_k^T)."""
    means = np.array([MEAN_RADIUS * rotation(a)[:, 0] for a in ANGLES])
    return means, [rotation(a) @ np.diag(np.sqrt(AXES)) for a in ANGLES]


def draw(k, count, rng):
    means, roots = components()
    return means[k] + rng.normal(size=(count, D)) @ roots[k].T


def blocks(n):
    """The sizes of the three blocks of n tokens (as equal as can be)."""
    return np.diff(np.round(np.linspace(0, n, len(ANGLES) + 1)).astype(int))


def order(i):
    """The components of sequence i's blocks, in order: a cyclic rotation."""
    return [(i + p) % len(ANGLES) for p in range(len(ANGLES))]


def sequences(family, seed, size):
    """{n: tokens (N, n, d)}: nested samples, one draw per seed grown
    with n (common random numbers). orders: sequence i is blocks of the
    components order(i), each block the first tokens of that block's draw;
    iid: every token of the equal mixture, the first n of one draw."""
    rng = np.random.default_rng([STREAM, FAMILIES.index(family), seed])
    top = max(size["tokens"])
    if family == "orders":
        longest = max(blocks(top))
        draws = [[draw(k, longest, rng) for k in order(i)] for i in range(len(ANGLES))]
        return {n: np.array([np.concatenate([b[:m] for b, m in zip(row, blocks(n))]) for row in draws])
                for n in size["tokens"]}
    picks = rng.integers(len(ANGLES), size=(len(ANGLES), top))
    means, roots = components()
    tokens = means[picks] + np.einsum("sjab,sjb->sja", np.array(roots)[picks], rng.normal(size=picks.shape + (D,)))
    return {n: tokens[:, :n] for n in size["tokens"]}


def data_file(folder, stem, tokens):
    """The tokens with zero targets: the kernel does not depend on them."""
    return common.data_file(folder, stem, tokens, np.zeros((tokens.shape[0], 1)))


def family_runs(size, folder):
    """K_V (with the log-sum-exp test) of both families at every n, seed and
    mask, the mean readout: one data file and one init.seed for both masks
    (a paired design)."""
    runs = []
    for family in FAMILIES:
        for seed in size["seeds"]:
            for n, tokens in sequences(family, seed, size).items():
                path = data_file(folder, f"{family}-s{seed}-n{n}", tokens)
                args = {"data.task": "file", "data.file": str(path), "model.head_dim": HEAD_DIM,
                        "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed,
                        "init.sigma_qk": SIGMA_QK, "readout.kind": "mean", "cgf.radius": CGF_RADIUS, "ntk.part": "V"}
                runs += [Run(f"{family}-{mask}-s{seed}-n{n}", {**args, "model.causal": mask}, command="ntk",
                             extra=["--cgf"]) for mask in MASKS]
    return runs


def pair_runs(size, folder):
    """K_V of section 9's permutation pairs (its generator, its seeds) at
    every width M, readout and mask, on one data file and init.seed a seed."""
    p, runs = size["pairs"], []
    for seed in size["seeds"]:
        tokens, targets = permutation_pairs(p["pairs"], p["n"], p["d"], p["gap"], seed)
        path = common.data_file(folder, f"pairs-s{seed}", tokens, targets)
        for M in p["widths"]:
            for readout in READOUTS:
                runs += [Run(f"pairs-{readout}-{mask}-s{seed}-M{M}",
                             {"data.task": "file", "data.file": str(path), "model.heads": M, "model.slices": p["L"],
                              "model.causal": mask, "init.seed": seed, "readout.kind": readout, "ntk.part": "V"},
                             command="ntk") for mask in MASKS]
    return runs


def kernel(path):
    import h5py
    with h5py.File(path, "r") as f:
        a = f["ntk"].attrs
        points = f["ntk/cgf_points"][()] if "cgf_points" in f["ntk"] else None
        return {"V_min": float(a["lambda_min"]), "V_max": float(a["lambda_max"]),
                "cgf_margin": float(a["cgf_margin"]) if "cgf_margin" in a else np.nan, "points": points,
                "runs": [path]}


def read_rows(paths, size):
    p = size["pairs"]
    rows = [{"part": "tokens", "family": family, "readout": "mean", "causal": mask, "n": n, "M": size["M"],
             "seed": seed, **kernel(paths[f"{family}-{mask}-s{seed}-n{n}"])}
            for family in FAMILIES for mask in MASKS for seed in size["seeds"] for n in size["tokens"]]
    rows += [{"part": "width", "family": "pairs", "readout": readout, "causal": mask, "n": p["n"], "M": M,
              "seed": seed, **kernel(paths[f"pairs-{readout}-{mask}-s{seed}-M{M}"])}
             for readout in READOUTS for mask in MASKS for seed in size["seeds"] for M in p["widths"]]
    return rows


def cell(rows, family, mask, readout="mean"):
    return [r for r in rows if r["family"] == family and r["causal"] == mask and r["readout"] == readout]


def prefix_cgf(i, t, Z):
    """The population log-sum-exp function of the orders' sequence i's
    prefix of fraction t at the points Z: the mixture of its blocks'
    components, each weighted by its share of the prefix."""
    means, roots = components()
    share = np.clip(t - np.arange(len(ANGLES)) / len(ANGLES), 0, 1 / len(ANGLES)) / t
    terms = [np.log(w) + Z @ means[k] + np.einsum("ki,ij,kj->k", Z, roots[k] @ roots[k].T, Z) / 2
             for w, k in zip(share, order(i)) if w > 0]
    return np.logaddexp.reduce(terms, axis=0)


def prefix_margins(points):
    """{t: mft's log-sum-exp margin (injectivity.margin) of the orders'
    three prefix measures of fraction t at the points}."""
    return {t: margin(np.column_stack([prefix_cgf(i, t, points) for i in range(len(ANGLES))]), points)
            for t in PREFIXES}


def limits(rows, size):
    """{(family, mask): the per-seed fits lambda_min = lambda_inf + c/n over
    n >= fit_from (injectivity.limit_fit)}."""
    return {(family, mask): limit_fit(cell(rows, family, mask), size) for family in FAMILIES for mask in MASKS}


def width_slopes(rows, size):
    """{readout: per-seed slope of the masked pairs' log lambda_min(K_V) on
    log M, or the reason there is none}."""
    widths, out = size["pairs"]["widths"], {}
    for readout in READOUTS:
        at = {(r["seed"], r["M"]): r["V_min"] for r in cell(rows, "pairs", "true", readout)}
        Y = np.array([[at[(s, M)] for M in widths] for s in size["seeds"]])
        out[readout] = stats.per_seed_slopes(widths, Y) if np.all(Y > 0) else \
            f"no fit: {np.sum(Y <= 0)} masked lambda_min <= 0"
    return out


def seed_text(values, digits=3):
    return ", ".join(f"{v:.{digits}g}" for v in values)


def criteria(rows, fits, slopes, size):
    """The plan lines, sanity a, b and criteria 1-7."""
    n = len(size["seeds"])
    window = f"n = {size['fit_from']}..{size['tokens'][-1]}, {n} seeds"
    widths = size["pairs"]["widths"]
    lines = [stats.Plan("orders, masked: lambda_inf above 0", PILOT["mean"][("orders", "true")],
                        PILOT["spread"][("orders", "true")], PILOT["seeds"], n).line()]
    lines += [stats.Plan(f"{family}, {'masked' if mask == 'true' else 'unmasked'}: lambda_inf inside "
                         f"[-{BAND:g}, {BAND:g}]", BAND, PILOT["spread"][(family, mask)], PILOT["seeds"], n).line()
              for family, mask in (("orders", "false"), ("iid", "true"), ("iid", "false"))]
    lines.append(stats.Plan("orders: the paired difference of lambda_inf, masked - unmasked, above 0",
                            PILOT["difference"][0], PILOT["difference"][1], PILOT["seeds"], n).line())
    lines += [stats.Plan(f"pairs, {readout} readout: the slope on log M inside [{centre - SLOPE_BAND:g}, "
                         f"{centre + SLOPE_BAND:g}]", SLOPE_BAND, PILOT["slope_spread"][readout],
                         PILOT["pair_seeds"], n).line() for readout, centre in (("query", EXPONENT), ("mean", 0.0))]
    free = [r for r in rows if r["family"] == "pairs" and r["causal"] == "false"]
    worst = max(abs(r["V_min"]) / r["V_max"] for r in free)
    lines.append(common.sanity(
        f"the unmasked pairs' kernel is singular to rounding, |lambda_min(K_V)| < {SINGULAR:g} lambda_max (every "
        "seed, width and readout)", worst < SINGULAR, f"largest |lambda_min|/lambda_max {worst:.2g} over {len(free)} "
        f"kernels, M = {widths[0]}..{widths[-1]}"))
    top = [r for r in cell(rows, "orders", "false") if r["n"] == size["tokens"][-1]]
    found = [prefix_margins(r["points"]) for r in top]
    low = {t: min(m[t] for m in found) for t in PREFIXES[:-1]}
    high = max(m[PREFIXES[-1]] for m in found)
    lines.append(common.sanity(
        f"the orders differ in their prefixes and not in their measure: population log-sum-exp margins at mft's "
        f"points (radius {CGF_RADIUS:g}) of the prefixes of fraction 1/3 and 2/3 at least {MARGIN}, of the whole "
        f"sequences below {ROUNDING:g} (every seed)", min(low.values()) >= MARGIN and high < ROUNDING,
        "; ".join(f"t = {t:.3g}: {v:.3g} (smallest)" for t, v in low.items()) + f"; t = 1: {high:.1e} (largest)"))

    def limit_text(key):
        f = fits[key]
        return (f"lambda_inf {f['lambda_inf'].text()}, c {f['c'].text()}; per seed {seed_text(f.estimates[:, 0])} "
                f"({window})")

    inf = fits[("orders", "true")]["lambda_inf"]
    lines.append(common.criterion("orders, masked: lambda_inf of lambda_min(K_V) = lambda_inf + c/n lies above 0 "
                                  "(the mask keeps the kernel injective where the prefixes differ)", inf.above(0.0),
                                  limit_text(("orders", "true"))))
    what = {("orders", "false"): "orders, unmasked ([B]: one measure, degenerate)",
            ("iid", "true"): "iid, masked (one prefix measure at every position: the mask alone does not help)",
            ("iid", "false"): "iid, unmasked (the control)"}
    for key, text in what.items():
        inf = fits[key]["lambda_inf"]
        lines.append(common.criterion(f"{text}: lambda_inf inside [-{BAND:g}, {BAND:g}]",
                                      inf.low > -BAND and inf.high < BAND, limit_text(key)))
    diff = stats.paired(fits[("orders", "true")].estimates[:, 0], fits[("orders", "false")].estimates[:, 0])
    lines.append(common.criterion("orders: the paired difference of lambda_inf, masked - unmasked, lies above 0",
                                  diff.above(0.0), f"masked - unmasked {diff.text()} ({window})"))
    for readout, centre, text in (("query", EXPONENT, "a finite-width effect, lambda_min ~ 1/M"),
                                  ("mean", 0.0, "a mean-field effect, flat in M")):
        fit = slopes[readout]
        if isinstance(fit, str):
            ok, numbers = False, fit
        else:
            slope = fit["slope"]
            ok = slope.low > centre - SLOPE_BAND and slope.high < centre + SLOPE_BAND
            numbers = (f"slope {slope.text()}; per seed {seed_text(fit.estimates[:, 1])} "
                       f"(M = {widths[0]}..{widths[-1]}, {n} seeds)")
        lines.append(common.criterion(
            f"pairs, {readout} readout: the mask's injectivity is {text}: the slope of the masked log lambda_min(K_V) "
            f"on log M lies inside [{centre - SLOPE_BAND:g}, {centre + SLOPE_BAND:g}]", ok, numbers))
    return lines


def plot(rows, fits, slopes, size, options):
    """The four cells against 1/n with their fits, the means against n, and
    the masked pairs against M with the slopes."""
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.6))
    ns = np.array(size["tokens"], float)
    grid = np.linspace(0, 1 / size["fit_from"], 20)
    for k, ((family, mask), ax) in enumerate(zip(fits, axes.ravel()[[0, 1, 3, 4]])):
        mine, fit = cell(rows, family, mask), fits[(family, mask)]
        for s in size["seeds"]:
            ax.plot(1 / ns, [r["V_min"] for r in mine if r["seed"] == s], "-", color="0.8", lw=0.7)
        mean = [stats.t_interval([r["V_min"] for r in mine if r["n"] == n]) for n in size["tokens"]]
        ax.errorbar(1 / ns, [m.value for m in mean], yerr=[[m.value - m.low for m in mean],
                    [m.high - m.value for m in mean]], fmt="o", ms=3, capsize=2, color=f"C{k}", label="mean over seeds")
        ax.plot(grid, fit["lambda_inf"].value + fit["c"].value * grid, "k--", lw=1,
                label=f"λ_∞ + c/n, n ≥ {size['fit_from']}")
        inf = fit["lambda_inf"]
        ax.errorbar([0], [inf.value], yerr=[[inf.value - inf.low], [inf.high - inf.value]], fmt="s", color="k",
                    capsize=4, label=f"λ_∞ = {inf.text()}")
        ax.axhline(0, color="0.5", lw=0.8)
        if (family, mask) != ("orders", "true"):
            ax.axhspan(-BAND, BAND, color="0.9", zorder=0, label=f"±{BAND:g}")
        ax.set_xlabel("1/n")
        ax.set_ylabel("λ_min(K_V), mean readout")
        ax.set_title(f"{family}, {'causal mask' if mask == 'true' else 'no mask'}", fontsize=9)
    ax = axes[0, 2]
    for k, (family, mask) in enumerate(fits):
        mine = cell(rows, family, mask)
        ax.loglog(ns, [np.mean([r["V_min"] for r in mine if r["n"] == n]) for n in size["tokens"]], "o-", ms=3,
                  color=f"C{k}", label=f"{family}, {'causal' if mask == 'true' else 'no mask'}")
    ax.set_xticks(ns, [str(n) for n in size["tokens"]])
    ax.minorticks_off()
    ax.set_xlabel("tokens per sequence n")
    ax.set_ylabel("λ_min(K_V), mean over seeds")
    ax = axes[1, 2]
    widths = np.array(size["pairs"]["widths"], float)
    for k, readout in enumerate(READOUTS):
        mine = cell(rows, "pairs", "true", readout)
        for s in size["seeds"]:
            ax.loglog(widths, [max(r["V_min"], 1e-18) for r in mine if r["seed"] == s], "-", color=f"C{k}", lw=0.5,
                      alpha=0.4)
        fit = slopes[readout]
        text = fit if isinstance(fit, str) else fit["slope"].text()
        geometric = np.exp([np.mean(np.log(np.maximum([r["V_min"] for r in mine if r["M"] == M], 1e-300)))
                            for M in widths])
        ax.loglog(widths, geometric, "o", color=f"C{k}", label=f"{readout} readout: slope {text}")
        if readout == "query":
            ax.loglog(widths, geometric[0] * widths[0] / widths, ":", color="0.4", label="∝ 1/M")
    ax.set_xticks(widths, [str(int(M)) for M in widths])
    ax.minorticks_off()
    ax.set_xlabel("heads per slice M (permutation pairs, causal mask)")
    ax.set_ylabel("λ_min(K_V), geometric mean; lines: seeds")
    fig.suptitle(f"error bars: 95 % Student-t over {len(size['seeds'])} seeds; grey: each seed's nested sample",
                 fontsize=9)
    common.finish_axes(axes.ravel())
    common.save_figure(fig, "causal_injectivity", options)


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "causal_injectivity")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("causal_injectivity" + ("-quick" if options.quick else "")) / "data"
    runs = family_runs(size, folder) + pair_runs(size, folder)
    if not options.quick:
        print(f"[causal_injectivity] {len(runs)} runs; about 15 minutes on 2 free cores", flush=True)
    paths = common.execute("causal_injectivity", runs, options)
    rows = read_rows(paths, size)
    common.write_csv("causal_injectivity", options, COLUMNS, rows)
    fits, slopes = limits(rows, size), width_slopes(rows, size)
    plot(rows, fits, slopes, size, options)
    common.write_criteria("causal_injectivity", options, criteria(rows, fits, slopes, size))


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()
