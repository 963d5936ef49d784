"""Collects the runs of a sweep: one row per run with its status (complete,
stopped, diverged, failed; a diverged run's final measures blank), the keys
the sweep varies, the seed, and the final risk R, objective Q, step count,
the risk's rate over a window and the tau it took to reach eps, the
held-out measures of its history beside the held-out baseline (the zero
predictor, the majority class, a task of symbols' own) and the ratio to
it, and the last NTK eigenvalues and stable step (ntk.every); a table on
stdout and in a CSV file, and a figure of the final risk (or any measure)
against each swept key, the mean over seeds with the band from the lowest
to the highest seed.

  python3 scripts/collect_sweep.py RUN.h5 [RUN.h5 ...] [--table TABLE] [--csv sweep.csv] [--plot sweep.png]
                                   [--report-failed] [--rate-window A:B] [--eps E]
                                   [--x KEY] [--hue KEY] [--facet KEY] [--y COLUMN ...]

The swept keys are the header keys of TABLE (the sweep table the runs were
made from, one file per row in table order) or, without it, the
configuration keys whose values differ between the runs' /config (the
output.* keys aside). Keys named *.seed or *_seed are the seeds: the figure
averages over them.
"""
import math
import os
import pathlib
import sys

from .sweep_table import sweep_rows

# The columns every collected table has; the swept keys (and init.seed) come
# between status and M.
FIRST = ["file", "status"]
SEED = "init.seed"
MEASURES = ["M", "L", "steps", "tau", "R0", "R", "Q", "rate", "tau_eps", "test_risk", "test_accuracy", "baseline",
            "test_ratio", "ntk_lambda_min", "ntk_lambda_max", "euler_dtau_max"]
COLUMNS = FIRST + [SEED] + MEASURES  # the columns of a collection with no swept key
# Keys that differ between the runs of a sweep without being swept: each
# run's own file and log.
NOT_SWEPT = ("output.",)
STATUSES = ("complete", "stopped", "diverged", "failed")
# The measures a diverged run leaves blank: its last values are no result.
DIVERGED_BLANK = ("R", "Q", "rate", "tau_eps", "test_risk", "test_accuracy", "test_ratio", "ntk_lambda_min",
                  "ntk_lambda_max", "euler_dtau_max")
# The rate's window by default: the last half of the run's tau.
RATE_WINDOW = (0.5, 1.0)


def is_seed(key):
    """A key the figure averages over: init.seed, data.seed, data.test_seed."""
    last = key.rsplit(".", 1)[-1]
    return last == "seed" or last.endswith("_seed")


def _final(hist, name):
    """The last finite value of a history column (NaN: none, or no column);
    the kernel's columns are NaN between their rows."""
    column = hist.get(name)
    if column is None:
        return math.nan
    finite = [float(v) for v in column if math.isfinite(float(v))]
    return finite[-1] if finite else math.nan


def rate(tau, risk, window=RATE_WINDOW):
    """The risk's exponential rate over a window of the run: minus the
    least-squares slope of log R against tau over the history rows whose
    tau lies in [a, b] times the last row's tau (window = (a, b)); NaN with
    fewer than two such rows of positive R."""
    a, b = window
    end = float(tau[-1])
    points = [(float(t), math.log(float(r))) for t, r in zip(tau, risk)
              if a * end <= float(t) <= b * end and float(r) > 0 and math.isfinite(float(r))]
    if len(points) < 2:
        return math.nan
    mean_t = sum(t for t, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return math.nan
    return -sum((t - mean_t) * (y - mean_y) for t, y in points) / spread


def tau_to(tau, risk, eps):
    """The first tau at which R comes down to `eps`: linear in log R between
    the row before and the first row at or below it (its own tau when the
    first row is); NaN when no row is, or without eps."""
    if eps is None:
        return math.nan
    for i, r in enumerate(float(v) for v in risk):
        if r <= eps:
            if i == 0:
                return float(tau[0])
            r0, t0, t1 = float(risk[i - 1]), float(tau[i - 1]), float(tau[i])
            if not (r0 > 0 and r > 0):
                return t1
            return t0 + (t1 - t0) * (math.log(r0) - math.log(eps)) / (math.log(r0) - math.log(r))
    return math.nan


def _read_run(path, window=RATE_WINDOW, eps=None):
    """(config, measures, status, why) of the training run in `path`;
    RunFileError for a file that is not one."""
    from . import io as mft_io
    from .runs import run_status

    with mft_io.open_run(path) as run:
        hist = run.history  # read once: the status and the measures come from it
        status, why = run_status(run, hist)
        cfg = run.config
        if status == "diverged" and not len(hist.get("step", ())):
            # Diverged in its first step, before any history row: its sizes alone.
            measures = dict.fromkeys(MEASURES, math.nan)
            measures.update({"M": int(cfg["model.heads"]), "L": int(cfg["model.slices"]), "steps": 0})
            return cfg, measures, status, why
        hist = run.training_history(hist=hist)
        baseline = run.baseline_risk
    last = int(hist["step"][-1])
    steps = int(cfg.get("train.steps", last))
    test_risk = _final(hist, "test_risk")
    measures = {"M": int(cfg["model.heads"]), "L": int(cfg["model.slices"]), "steps": last,
                "tau": float(hist["tau"][-1]), "R0": float(hist["risk"][0]), "R": float(hist["risk"][-1]),
                "Q": float(hist["objective"][-1]), "rate": rate(hist["tau"], hist["risk"], window),
                "tau_eps": tau_to(hist["tau"], hist["risk"], eps), "test_risk": test_risk,
                "test_accuracy": _final(hist, "test_accuracy"),
                "baseline": math.nan if baseline is None else baseline,
                "test_ratio": test_risk / baseline if baseline else math.nan,
                **{k: _final(hist, k) for k in ("ntk_lambda_min", "ntk_lambda_max", "euler_dtau_max")}}
    if status == "diverged":
        # Recorded by the run itself (/history.end): its last values are no result.
        measures.update({k: math.nan for k in DIVERGED_BLANK})
        return cfg, measures, status, why
    if status == "stopped":
        # The run's own words when its log lies beside it (a local sweep's
        # runs/sweep-NAME-ROW.log): an error line is a failure, a divergence
        # among them; a stop by signal or wall time leaves none.
        error = _error_line(pathlib.Path(path).with_suffix(".log"))
        if error:
            return cfg, measures, "failed", f"failed at step {last} of {steps}: {error}"
    return cfg, measures, status, why


def _error_line(log):
    """The last "mft: error:" line of the run's log `log`, or None."""
    try:
        with open(log, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 65536))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    errors = [line for line in lines if line.startswith("mft: error: ")]
    return errors[-1][len("mft: error: "):] if errors else None


def why_failed(path):
    """Why the run of a sweep task in `path` did not finish, or None when it
    did: no file (the task ended before its first snapshot), a file that is
    not a complete training run, or one whose history stops before
    train.steps (diverged, failed or out of time)."""
    from . import io as mft_io

    if not os.path.exists(path):
        return "no such file (the task ended before its first snapshot; see its log)"
    try:
        return _read_run(path)[3]
    except mft_io.RunFileError as e:
        return str(e).replace(f"{path}: ", "", 1)


def _text(value):
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return str(value)


def collect(paths, table=None, report_failed=False, window=RATE_WINDOW, eps=None):
    """The runs in `paths` as a pandas.DataFrame: file (the basename),
    status, the swept keys, init.seed and MEASURES (M, L; steps, tau, R, Q,
    test_risk and test_accuracy of the last complete history row, NaN where
    the run has no held-out data; R0 the initial risk; `rate` over the
    fraction `window` of the run's tau (`rate`), `tau_eps` where R first
    reaches `eps` (`tau_to`); `baseline` the reference baseline's held-out
    risk (Run.baseline_risk) and `test_ratio` test_risk over it; the last
    ntk_lambda_min, ntk_lambda_max and euler_dtau_max the run measured
    (ntk.every)), sorted by L, M, the
    swept keys, the seed and the file. `table`: the sweep table of the runs,
    one path per row in its order; its header keys are the swept keys, with
    their values as the table writes them (a value the row leaves empty
    from the run's /config). With `report_failed` a missing or damaged
    file is a row of status failed; without, it raises mft.io.RunFileError
    (as does a file that is no training run)."""
    import pandas as pd
    from . import io as mft_io

    rows, configs = [], []
    table_rows = None
    if table is not None:
        table_rows = sweep_rows(table)
        if len(table_rows) != len(paths):
            raise mft_io.RunFileError(f"{table}: {len(table_rows)} rows, but {len(paths)} run files were given "
                                      "(one per row, in table order)")
    for i, path in enumerate(paths):
        row = {"file": os.path.basename(path)}
        try:
            if report_failed and not os.path.exists(path):
                raise mft_io.RunFileError(f"{path}: no such file")
            cfg, measures, status, _ = _read_run(path, window, eps)
        except mft_io.RunFileError:
            if not report_failed:
                raise
            cfg, measures, status = {}, {}, "failed"
        row.update(measures, status=status)
        rows.append(row)
        configs.append({k: _text(v) for k, v in cfg.items()})
    if table_rows is not None:
        keys = list(table_rows[0]) if table_rows else []
    else:
        read = [c for c in configs if c]
        every = sorted({k for c in read for k in c})
        keys = [k for k in every if not k.startswith(NOT_SWEPT) and len({c.get(k) for c in read}) > 1]
    keys = [k for k in keys if k != SEED]
    for i, (row, cfg) in enumerate(zip(rows, configs)):
        for key in keys + [SEED]:
            # The table's value as written, else the run's resolved value.
            value = table_rows[i].get(key) if table_rows is not None else None
            row[key] = value or cfg.get(key)
    frame = pd.DataFrame(rows, columns=FIRST + keys + [SEED] + MEASURES)
    for column in ("M", "L", "steps"):
        frame[column] = frame[column].astype("Int64")
    order = ["L", "M"] + [k for k in keys if k not in ("model.heads", "model.slices")] + [SEED, "file"]
    frame = frame.sort_values(order, key=_sort_key, kind="stable").reset_index(drop=True)
    frame.attrs["swept"] = keys
    frame.attrs["rate window"] = tuple(window)
    frame.attrs["eps"] = eps
    return frame


def _sort_key(column):
    """Numbers by value (before any text), text by itself."""
    import pandas as pd

    def key(v):
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            return (2, 0.0, "")
        try:
            return (0, float(v), "")
        except (TypeError, ValueError):
            return (1, 0.0, str(v))
    return column.map(key)


def swept_keys(frame):
    """The swept keys of a collected frame, init.seed aside."""
    return list(frame.attrs.get("swept", [c for c in frame.columns if c not in COLUMNS]))


def print_table(frame, out=None):
    out = out or sys.stdout
    keys = swept_keys(frame) + [SEED]
    widths = [max(6, len(k)) for k in keys]
    print(f"{'file':<28} {'status':<9} " + " ".join(f"{k:>{w}}" for k, w in zip(keys, widths))
          + f" {'steps':>7} {'tau':>9} {'R initial':>12} {'R final':>12} {'Q final':>12} {'rate':>10}"
          f" {'test R':>12} {'test/base':>9}", file=out)

    def number(v, spec):
        return "-" if v is None or v is math.nan or (isinstance(v, float) and math.isnan(v)) or str(v) == "<NA>" \
            else format(v, spec)
    for r in frame.to_dict("records"):
        cells = " ".join(f"{'-' if r[k] is None else str(r[k]):>{w}}" for k, w in zip(keys, widths))
        print(f"{r['file']:<28} {r['status']:<9} {cells} {number(r['steps'], '>7')} {number(r['tau'], '>9.4g')}"
              f" {number(r['R0'], '>12.5e')} {number(r['R'], '>12.5e')} {number(r['Q'], '>12.5e')}"
              f" {number(r['rate'], '>10.4g')} {number(r['test_risk'], '>12.5e')} {number(r['test_ratio'], '>9.4f')}",
              file=out)


def write_csv(frame, path):
    """The table as CSV, plain "\\n" line ends, floats to the last digit,
    an empty field for a value the run does not have."""
    frame.to_csv(path, index=False, lineterminator="\n")
