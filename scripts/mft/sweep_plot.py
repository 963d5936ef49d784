"""The figure of a collected sweep (mft.sweep_collect): one panel per swept
key that takes more than one value among the complete runs (or the key of
--x), the final risk R against that key; one curve per setting of the other
swept keys (or of --hue, with any other varied key), in numeric order (the
legend names them); a panel per value of --facet; each point the mean over
the seeds (keys named *.seed or *_seed) of the runs at that setting, with a
band from the lowest to the highest seed's value. A second row does the
same for the held-out risk when the runs have one (--y: the measures
instead, a row each). Runs that did not complete are left out."""
from .sweep_collect import is_seed, swept_keys

# What the figure draws on its rows by default: (column, axis label).
MEASURES = [("R", "final risk R"), ("test_risk", "final held-out risk")]
# The axis labels of the other measures --y may name.
LABELS = {"rate": "rate of R over the window", "tau_eps": "tau to reach eps", "test_ratio": "held-out risk / baseline",
          "Q": "final objective Q", "R0": "initial risk", "test_accuracy": "final held-out accuracy",
          "ntk_lambda_min": "last lambda_min(K_V)", "ntk_lambda_max": "last lambda_max(K_V)",
          "euler_dtau_max": "last stable Euler step"}
# Friendlier names for the axes of the usual keys.
NAMES = {"model.heads": "heads per slice M (model.heads)", "model.slices": "depth slices L (model.slices)"}


def _number(values):
    """The values as floats when every one is a number, else None."""
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        return None


def _distinct(values):
    """The distinct values in order: by number when they all are, else as text."""
    unique = list(dict.fromkeys(str(v) for v in values))
    numbers = _number(unique)
    if numbers is not None:
        return [u for _, u in sorted(zip(numbers, unique))]
    return sorted(unique)


def _order(values):
    """A sort key for settings (tuples of text): numbers by value, before text."""
    def one(v):
        try:
            return (0, float(v), "")
        except (TypeError, ValueError):
            return (1, 0.0, str(v))
    return tuple(one(v) for v in values)


def check_axes(frame, x=None, hue=None, facet=None, y=None):
    """ValueError naming the option when --x, --hue or --facet is not a key
    the runs vary, two of them name one key, or a --y is not a numeric
    column of the collection."""
    keys = [k for k in swept_keys(frame) if k in frame.columns] + (["init.seed"] if "init.seed" in frame else [])
    named = {}
    for option, key in (("--x", x), ("--hue", hue), ("--facet", facet)):
        if key is None:
            continue
        if key not in keys:
            raise ValueError(f"{option} {key}: not a key of these runs (they have {', '.join(keys) or 'none'})")
        if key in named:
            raise ValueError(f"{option} {key}: {named[key]} names it already")
        named[key] = option
    for measure in y or ():
        if measure not in frame.columns or frame[measure].dtype.kind not in "fiu":
            numeric = [c for c in frame.columns if frame[c].dtype.kind in "fiu"]
            raise ValueError(f"--y {measure}: not a numeric column of the collection ({', '.join(numeric)})")


def figure_data(frame, x=None, hue=None, facet=None, y=None):
    """What the figure draws, without drawing it: a list of panels, each
    {"key", "facet", "measure", "numeric", "x values", "seeds", "curves"};
    a curve is {"label", "x", "mean", "low", "high", "runs"} (one point per
    value of the key: the mean, lowest and highest value over the seeds and
    how many runs). Only complete runs with a finite measure count.

    x: the key on the horizontal axis (default: a panel for each key that
    varies); hue: the key whose values are the curves (with any other
    varied key that is neither x nor facet: nothing but the seeds is
    averaged); facet: a panel for each of its values; y: the measures, a
    row of panels each (default: R, and the held-out risk when there is
    one). Curves and facets in numeric order."""
    import pandas as pd

    done = frame[frame["status"] == "complete"]
    keys = [k for k in swept_keys(frame) if k in frame.columns]
    seeds = [k for k in keys + ["init.seed"] if is_seed(k) and k in frame.columns
             and done[k].astype(str).nunique() > 1]
    varied = [k for k in keys if not is_seed(k) and done[k].astype(str).nunique() > 1]
    for key in (x, hue, facet):  # a key named stays on its axis even when it takes one value
        if key and key not in varied and not is_seed(key):
            varied.append(key)
    measures = [(m, dict(MEASURES).get(m, LABELS.get(m, m))) for m in y] if y else MEASURES
    panels = []
    for measure, label in measures:
        rows = done[pd.to_numeric(done[measure], errors="coerce").notna()] if measure in done else done.iloc[:0]
        if not y and measure != "R" and rows.empty:
            continue
        for key in [x] if x else [k for k in varied if k not in (hue, facet)]:
            for facet_value in _distinct(rows[facet]) if facet else [None]:
                part = rows if facet is None else rows[rows[facet].astype(str) == facet_value]
                others = ([hue] if hue else []) + [k for k in varied if k not in (key, facet, hue)]
                xs = _distinct(part[key])
                curves = []
                if not others:
                    groups = [((), part)]
                elif len(others) == 1:
                    groups = part.groupby(part[others[0]].astype(str), sort=False)
                else:
                    groups = part.groupby([part[k].astype(str) for k in others], sort=False)
                for setting, group in groups:
                    setting = setting if isinstance(setting, tuple) else (setting,)
                    curve = {"label": ", ".join(f"{k} = {v}" for k, v in zip(others, setting)), "x": [],
                             "mean": [], "low": [], "high": [], "runs": []}
                    for value in xs:
                        values = [float(v) for v in group[group[key].astype(str) == value][measure]]
                        if not values:
                            continue
                        curve["x"].append(value)
                        curve["mean"].append(sum(values) / len(values))
                        curve["low"].append(min(values))
                        curve["high"].append(max(values))
                        curve["runs"].append(len(values))
                    if curve["x"]:
                        curves.append((_order(setting), curve))
                curves = [curve for _, curve in sorted(curves, key=lambda pair: pair[0])]
                panels.append({"key": key, "facet": None if facet is None else (facet, facet_value),
                               "measure": measure, "ylabel": label, "numeric": _number(xs) is not None,
                               "x values": xs, "seeds": seeds, "curves": curves})
    if not panels and not done.empty and not y:
        # Nothing but seeds varies: R of each run against its seed (or its file).
        x = seeds[0] if seeds else "file"
        curve = {"label": "", "x": [str(v) for v in done[x]], "mean": [float(v) for v in done["R"]],
                 "low": [float(v) for v in done["R"]], "high": [float(v) for v in done["R"]],
                 "runs": [1] * len(done)}
        panels.append({"key": x, "facet": None, "measure": "R", "ylabel": "final risk R", "numeric": False,
                       "x values": curve["x"], "seeds": [], "curves": [curve]})
    return panels


def plot(frame, path, x=None, hue=None, facet=None, y=None):
    """Draws figure_data(frame, x, hue, facet, y) into `path` (PNG, or any
    format matplotlib knows by the suffix); returns the panels drawn."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    panels = figure_data(frame, x, hue, facet, y)
    columns = max(1, len({(p["key"], p["facet"]) for p in panels}))
    rows = max(1, len({p["measure"] for p in panels}))
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows), squeeze=False)
    places = {}
    for panel in panels:
        places.setdefault(panel["measure"], len(places))
    column_of = {}
    for panel in panels:
        column_of.setdefault((panel["key"], panel["facet"]), len(column_of))
    for ax in axes.flat:
        ax.set_visible(False)
    for panel in panels:
        ax = axes[places[panel["measure"]]][column_of[(panel["key"], panel["facet"])]]
        ax.set_visible(True)
        values = panel["x values"]
        numeric = panel["numeric"]
        log_x = numeric and min(float(v) for v in values) > 0 and max(float(v) for v in values) >= 8 * min(
            float(v) for v in values)
        for curve in panel["curves"]:
            x = [float(v) for v in curve["x"]] if numeric else [values.index(v) for v in curve["x"]]
            line, = ax.plot(x, curve["mean"], "o-", label=curve["label"] or None)
            if any(h > lo for lo, h in zip(curve["low"], curve["high"])):
                ax.fill_between(x, curve["low"], curve["high"], color=line.get_color(), alpha=0.2, linewidth=0)
        if not numeric:
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels(values, rotation=30 if len(values) > 4 else 0, fontsize=8)
        if log_x:
            ax.set_xscale("log")
        if numeric and len(values) <= 12:
            ax.set_xticks([float(v) for v in values])
            ax.set_xticklabels(values, fontsize=8)
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        every = [v for c in panel["curves"] for v in c["low"] + c["mean"]]
        if every and min(every) > 0:
            ax.set_yscale("log")
        ax.set_xlabel(NAMES.get(panel["key"], panel["key"]))
        ax.set_ylabel(panel["ylabel"])
        ax.grid(True, which="both", alpha=0.3)
        if any(c["label"] for c in panel["curves"]):
            ax.legend(fontsize=7)
        seeds = panel["seeds"]
        runs = sorted({n for c in panel["curves"] for n in c["runs"]})
        where = f"{panel['facet'][0]} = {panel['facet'][1]}: " if panel["facet"] else ""
        if seeds and runs:
            counts = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]} to {runs[-1]}"
            ax.set_title(f"{where}mean over {', '.join(seeds)} ({counts} runs a point); band: lowest to highest",
                         fontsize=8)
        else:
            ax.set_title(f"{where}one run a point", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return panels
