"""What the tests of the mft Python package share: the paths, the
interpreter, synthetic mft/1 run files written with h5py, and a stand-in for
the mft program's `--keys`."""
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

PYTHON = os.environ.get("PYTHON") or sys.executable  # ctest sets PYTHON (MFT_PYTHON)
ENV = dict(os.environ, PYTHONPATH=str(SCRIPTS))
# What a stand-in for `mft --keys` prints: the keys of the tables used here
# (output.file too: mft knows it, a sweep table may not set it).
KEYS = ["model.heads", "model.slices", "model.attention", "readout.weights", "train.dtau", "train.steps", "output.file",
        "init.seed", "init.sigma_qk"]


def script(name, *args, timeout=60):
    """Runs scripts/NAME.py; returns (exit status, stdout, stderr)."""
    done = subprocess.run([PYTHON, str(SCRIPTS / f"{name}.py"), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def grow(f, name, rows, value=0.0):
    """Appends `rows` rows of `value` to dataset `name` of the open file f
    (a snapshot or a history row cut short), keeping its attributes."""
    old = f[name]
    data, attrs = old[...], dict(old.attrs)
    del f[name]
    f[name] = np.concatenate([data, np.full((rows,) + data.shape[1:], value, dtype=data.dtype)])
    f[name].attrs.update(attrs)


def changed_copy(source, folder, name, change):
    """A copy of run file `source` as folder/name, changed by
    change(h5py.File): a damaged or hostile variant of a good file."""
    import shutil
    path = str(Path(folder) / name)
    shutil.copy(source, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def write_run(path, *, M=3, L=2, d=4, d_h=2, S=3, T=5, seed=0, mlp=True, history=True):
    """A small mft/1 run file: /config, /data, S snapshots of Q, K, V (and W1,
    W2 with M_f = M + 2 neurons of width 3), T history rows. Returns the
    arrays written."""
    rng = np.random.default_rng(seed)
    N, n, M_f, d_f = 5, 4, M + 2, 3
    arrays = {
        "step": np.arange(S, dtype=np.int64) * 10,
        "tau": np.arange(S) * 10 * 0.1 + rng.random() * 1e-3,
        "Q": rng.standard_normal((S, L, M, d_h, d)),
        "K": rng.standard_normal((S, L, M, d_h, d)),
        "V": rng.standard_normal((S, L, M, d, d)),
    }
    if mlp:
        arrays["W1"] = rng.standard_normal((S, L, M_f, d_f, d))
        arrays["W2"] = rng.standard_normal((S, L, M_f, d, d_f))
    hist = {
        "step": np.arange(T, dtype=np.int64),
        "tau": np.arange(T) * 0.1,
        "risk": np.exp(-np.arange(T) * 0.3) * (1 + 0.1 * rng.random()),
        "grad_norm": rng.random(T),
        "wall_time": np.cumsum(rng.random(T)),
        "accuracy": rng.random(T),
    }
    hist["objective"] = hist["risk"] + 0.01 * rng.random(T)
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "mft/1"
        f.attrs["mft_version"] = "test"
        f.attrs["ranks"] = 1
        cfg = f.create_group("config")
        for key, value in {"model.d": d, "model.head_dim": d_h, "model.heads": M, "model.slices": L,
                           "data.sequences": N, "data.tokens": n, "data.task": "icl-linear",
                           "train.dtau": 0.1, "train.lambda": 0.0, "train.steps": T - 1,
                           "readout.weights": "0.5,0.25"}.items():
            cfg.attrs[key] = value
        f["data/tokens"] = rng.standard_normal((N, n, d))
        f["data/targets"] = rng.standard_normal((N, 1))
        for name, a in arrays.items():
            f["particles/" + name] = a
        if history:
            for name, a in hist.items():
                f["history/" + name] = a
    return arrays, hist


SMALL = {"model.d": 3, "model.head_dim": 2, "model.slices": 2, "data.sequences": 4, "data.tokens": 5}


def small(**keys):
    """The command-line keys of a small run: SMALL with `keys` (model_heads=3
    for model.heads) over it."""
    merged = dict(SMALL, **{k.replace("_", ".", 1): v for k, v in keys.items()})
    return [str(a) for key, value in merged.items() for a in (f"--{key}", value)]


def mft_command(folder, *args):
    """Runs the built mft (one rank) in `folder`; fails the test on an error."""
    done = subprocess.run([os.environ["MFT"], *map(str, args)], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"mft {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def one_line_error(test, call, *words):
    """Asserts that call() raises RunFileError, one line holding `words`;
    returns the message."""
    from mft.io import RunFileError

    with test.assertRaises(RunFileError) as caught:
        call()
    message = str(caught.exception)
    test.assertNotIn("\n", message)
    for w in words:
        test.assertIn(str(w), message)
    return message


def stand_in_mft(build):
    """A stand-in for BUILD/apps/mft (MFT_BUILD=BUILD, as env.sh finds mft)
    that prints KEYS for `--keys`, accepts `train --dry-run ...` (each call
    appended to BUILD/apps/dry-runs.log, one line of its arguments) unless
    it names model.heads = x, which it refuses as mft does, and refuses
    anything else."""
    program = Path(build) / "apps" / "mft"
    program.parent.mkdir(parents=True, exist_ok=True)
    log = program.parent / "dry-runs.log"
    program.write_text('#!/usr/bin/env bash\n'
                       'if [ "$1 $2" = "train --dry-run" ]; then\n'
                       f'  echo "$*" >>"{log}"\n'
                       '  [[ " $* " == *" --model.heads x "* ]] && '
                       '{ echo "mft: error: model.heads = x: not an integer" >&2; exit 2; }\n'
                       '  exit 0\n'
                       'fi\n'
                       '[ "$*" = --keys ] || { echo "mft: error: $*" >&2; exit 2; }\n'
                       + "".join(f"echo {key}\n" for key in KEYS))
    program.chmod(0o755)
    return str(program)
