#!/usr/bin/env python3
"""The hostile-file corpus: HDF5 files crafted as an attacker (or a careless
script) would make them, each derived from a valid run file.

Attributes of more than one value where the format has one (a reader of one
value must never read past it), links that lead out of the file or to
another object, values stored outside the file (a virtual dataset whose
source is missing, external raw storage), numbers of another type (float32
particles, int32 steps: read back converted, a continued run would not be
the same), counts that disagree (steps rewritten, so that tau is not step x
train.dtau; a complete count beyond the rows) and a file rebuilt by h5py
(chunks allocated incrementally, which parallel HDF5 cannot extend).

make_corpus(fx) writes the files into the folder fx, which holds the valid
run file good.h5 (bad_inputs.py's fixture); cases(...) is the table that
sends each through every input path that reads it (--restart, --from,
init.file, data.file) on 1 and 2 ranks. bad_inputs.py runs them with its
other cases and its checks: exit 2, one line naming the object, every
file unchanged, nothing written. `python3 hostile_files.py FOLDER` writes
the corpus beside FOLDER/good.h5 (to try a file by hand).
"""
import os
import shutil
import sys

import h5py
import numpy as np


def changed_copy(fx, name, change):
    """fx/name: a copy of the valid run file fx/good.h5 with change(h5py.File)
    applied (bad_input_fixtures.py's damaged files are made the same way)."""
    path = os.path.join(fx, name)
    shutil.copyfile(os.path.join(fx, "good.h5"), path)
    with h5py.File(path, "r+") as f:
        change(f)


def _set_attr(obj_path, name, value):
    return lambda f: f[obj_path].attrs.__setitem__(name, value)


def _retype(path, dtype):
    """The dataset at `path`, same values and layout, stored as `dtype`."""
    def change(f):
        old = f[path]
        values, chunks, maxshape = old[...], old.chunks, old.maxshape
        del f[path]
        f.create_dataset(path, data=values.astype(dtype), chunks=chunks, maxshape=maxshape)
    return change


def _soft_link(path):
    """`path` moved to /spare and replaced by a soft link to it."""
    def change(f):
        f.require_group("spare")
        f.move(path, "/spare/" + path.strip("/").replace("/", "_"))
        f[path] = h5py.SoftLink("/spare/" + path.strip("/").replace("/", "_"))
    return change


def _external_link(fx, path, other):
    """`path` moved into the file fx/other (same layout) and replaced by an
    external link to it: a restart would write into that file."""
    def change(f):
        with h5py.File(os.path.join(fx, other), "w") as o:
            f.copy(f[path], o, name="moved")
        del f[path]
        f[path] = h5py.ExternalLink(other, "/moved")
    return change


def _virtual_tokens(fx):
    """/data/tokens as a virtual dataset whose source file does not exist:
    HDF5 reads its fill value (zeros) for a missing source."""
    def change(f):
        shape = f["data/tokens"].shape
        del f["data/tokens"]
        layout = h5py.VirtualLayout(shape=shape, dtype="f8")
        layout[...] = h5py.VirtualSource(os.path.join(fx, "missing-source.h5"), "data/tokens", shape=shape)
        f.create_virtual_dataset("data/tokens", layout)
    return change


def _steps_rewritten(f):
    """The snapshots' steps rewritten as 0, 1, 2 with their times kept: a
    restart would continue "from step 2" with the particles of step 4."""
    rows = int(f["particles"].attrs["complete"])
    f["particles/step"][:rows] = np.arange(rows)


def _rebuilt(fx):
    """Every object copied by h5py into a new file, same shapes, chunks,
    types and attributes (chunks allocated incrementally, h5py's default)."""
    with h5py.File(os.path.join(fx, "good.h5"), "r") as src, h5py.File(os.path.join(fx, "h_rebuilt.h5"), "w") as dst:
        dst.attrs.update(src.attrs)

        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                dst.require_group(name).attrs.update(obj.attrs)
            else:
                dst.create_dataset(name, data=obj[...], chunks=obj.chunks, maxshape=obj.maxshape,
                                   dtype=obj.dtype).attrs.update(obj.attrs)
        src.visititems(visit)


def _q_partly_unwritten(f):
    """/particles/Q with its last complete snapshot's chunks never written
    (allocated incrementally, as h5py does): HDF5 reads them as zeros."""
    q = f["particles/Q"]
    values, chunks = q[...], (1,) + q.shape[1:]
    del f["particles/Q"]
    new = f.create_dataset("particles/Q", q.shape, "f8", chunks=chunks, maxshape=(None,) + q.shape[1:])
    new[: int(f["particles"].attrs["complete"]) - 1] = values[: int(f["particles"].attrs["complete"]) - 1]


def _data_file(fx, name, tokens):
    """A data file (data.task = file) whose /data/tokens `tokens(f)` makes."""
    with h5py.File(os.path.join(fx, name), "w") as f:
        tokens(f)
        f["data/targets"] = np.zeros((3, 1))


def make_corpus(fx):
    copies = {
        # One value expected, more stored.
        "h_heads_array.h5": _set_attr("config", "model.heads", np.array([5, 5])),
        "h_attention_ints.h5": _set_attr("config", "model.attention", np.array([1, 2, 3])),
        "h_attention_strings.h5": _set_attr("config", "model.attention", np.array([b"softmax", b"relu"])),
        "h_dtau_compound.h5": _set_attr("config", "train.dtau", np.array((0.2, 0.3), dtype=[("a", "f8"), ("b", "f8")])),
        "h_format_array.h5": _set_attr("/", "format", np.array([b"mft/1", b"mft/1"])),
        "h_complete_array.h5": _set_attr("particles", "complete", np.array([3, 4])),
        "h_complete_string.h5": _set_attr("particles", "complete", "3"),
        "h_complete_float.h5": _set_attr("particles", "complete", 3.5),
        "h_complete_huge.h5": _set_attr("particles", "complete", np.uint64(2**63 + 5)),
        "h_complete_100.h5": _set_attr("particles", "complete", 100),
        "h_history_complete_array.h5": _set_attr("history", "complete", np.array([5, 5])),
        # Objects that are not the file's own.
        "h_q_external.h5": _external_link(fx, "particles/Q", "h_q_target.h5"),
        "h_config_external.h5": _external_link(fx, "config", "h_config_target.h5"),
        "h_q_soft.h5": _soft_link("particles/Q"),
        "h_particles_soft.h5": _soft_link("particles"),
        "h_tokens_virtual.h5": _virtual_tokens(fx),
        # Numbers of another type.
        "h_q_float32.h5": _retype("particles/Q", "f4"),
        "h_step_int32.h5": _retype("particles/step", "i4"),
        "h_tau_float32.h5": _retype("particles/tau", "f4"),
        "h_risk_float32.h5": _retype("history/risk", "f4"),
        "h_hstep_uint64.h5": _retype("history/step", "u8"),
        "h_tokens_float32.h5": _retype("data/tokens", "f4"),
        # Counts that disagree.
        "h_tau_1e6.h5": lambda f: f["particles/tau"].__setitem__(int(f["particles"].attrs["complete"]) - 1, 1e6),
        "h_steps_rewritten.h5": _steps_rewritten,
        # One dataset under two names (hard links).
        "h_k_is_q.h5": lambda f: (f.__delitem__("particles/K"), f.__setitem__("particles/K", f["particles/Q"])),
        "h_objective_is_risk.h5": lambda f: (f.__delitem__("history/objective"),
                                             f.__setitem__("history/objective", f["history/risk"])),
        "h_q_unwritten.h5": _q_partly_unwritten,
        "h_step_max.h5": lambda f: f["particles/step"].__setitem__(int(f["particles"].attrs["complete"]) - 1,
                                                                   2**63 - 1),
    }
    for name, change in copies.items():
        changed_copy(fx, name, change)
    _rebuilt(fx)
    virtual = _virtual_tokens(fx)
    _data_file(fx, "h_data_unwritten.h5", lambda f: f.create_dataset("data/tokens", (3, 4, 8), "f8", chunks=(1, 4, 8)))
    _data_file(fx, "h_data_contiguous_unwritten.h5", lambda f: f.create_dataset("data/tokens", (3, 4, 8), "f8"))
    _data_file(fx, "h_data_virtual.h5", lambda f: (f.create_dataset("data/tokens", data=np.zeros((3, 4, 8))),
                                                   virtual(f)))
    with open(os.path.join(fx, "h_raw.bin"), "wb") as raw:
        raw.write(np.zeros(3 * 4 * 8).tobytes())
    _data_file(fx, "h_data_external_raw.h5", lambda f: f.create_dataset(
        "data/tokens", (3, 4, 8), "f8", external=[(os.path.join(fx, "h_raw.bin"), 0, 3 * 4 * 8 * 8)]))
    _data_file(fx, "h_data_compound.h5", lambda f: f.create_dataset(
        "data/tokens", data=np.zeros((3, 4, 8), dtype=[("x", "f8")])))
    _data_file(fx, "h_data_longdouble.h5", lambda f: f.create_dataset(
        "data/tokens", data=np.zeros((3, 4, 8), dtype=np.longdouble)))


def cases(fx, Case, run, shape):
    """The table: (name, arguments, what the line must name) for bad_inputs.py's
    Case; `run` are the keys of good.h5's run, `shape` those without heads."""
    p = lambda n: os.path.join(fx, n)
    restart = lambda f: ["train", *run, "--train.steps", "6", "--restart", p(f)]
    init = lambda f: ["forward", *run, "--init.file", p(f)]
    from_ = lambda f: ["ntk", "--from", p(f), "--output.file", "ntk.h5"]
    data = lambda f: ["forward", "--data.task", "file", "--data.file", p(f)]
    table = [
        ("restart", restart, "h_heads_array.h5", ("--restart", "model.heads", "shape (2,)")),
        ("restart", restart, "h_attention_ints.h5", ("--restart", "model.attention", "shape (3,)")),
        ("restart", restart, "h_attention_strings.h5", ("--restart", "model.attention", "shape (2,)")),
        ("restart", restart, "h_dtau_compound.h5", ("--restart", "train.dtau", "neither a string nor a number")),
        ("restart", restart, "h_format_array.h5", ("--restart", "format", "shape (2,)")),
        ("restart", restart, "h_complete_array.h5", ("--restart", "/particles.complete", "shape (2,)")),
        ("restart", restart, "h_complete_string.h5", ("--restart", "/particles.complete", "not an integer")),
        ("restart", restart, "h_complete_float.h5", ("--restart", "/particles.complete", "not an integer")),
        ("restart", restart, "h_complete_huge.h5", ("--restart", "/particles.complete", "not an integer")),
        ("restart", restart, "h_complete_100.h5", ("--restart", "/particles/", "rows")),
        ("restart", restart, "h_history_complete_array.h5", ("--restart", "/history.complete", "shape (2,)")),
        ("restart", restart, "h_q_external.h5", ("--restart", "/particles/Q is an external link", "hard links")),
        ("restart", restart, "h_config_external.h5", ("--restart", "/config is an external link", "hard links")),
        ("restart", restart, "h_q_soft.h5", ("--restart", "/particles/Q is a soft link", "hard links")),
        ("restart", restart, "h_particles_soft.h5", ("--restart", "/particles is a soft link", "hard links")),
        ("restart", restart, "h_tokens_virtual.h5", ("--restart", "/data/tokens", "virtual dataset")),
        ("restart", restart, "h_q_float32.h5", ("--restart", "/particles/Q is float32")),
        ("restart", restart, "h_step_int32.h5", ("--restart", "/particles/step is int32")),
        ("restart", restart, "h_tau_float32.h5", ("--restart", "/particles/tau is float32")),
        ("restart", restart, "h_risk_float32.h5", ("--restart", "/history/risk is float32")),
        ("restart", restart, "h_hstep_uint64.h5", ("--restart", "/history/step is uint64")),
        ("restart", restart, "h_tokens_float32.h5", ("--restart", "/data/tokens is float32")),
        ("restart", restart, "h_tau_1e6.h5", ("--restart", "/particles/tau of step 4 is 1000000", "train.dtau")),
        ("restart", restart, "h_steps_rewritten.h5", ("--restart", "/particles/tau of step 1 is 0.4", "train.dtau")),
        ("restart", restart, "h_rebuilt.h5", ("--restart", "allocates its chunks incrementally")),
        ("restart", restart, "h_step_max.h5", ("--restart", "/particles/step of row 2 is 9223372036854775807")),
        ("restart", restart, "h_k_is_q.h5", ("--restart", "/particles/K and /particles/Q are one dataset")),
        ("restart", restart, "h_objective_is_risk.h5", ("--restart", "/history/", "one dataset under two names")),
        ("ntk --from", from_, "h_k_is_q.h5", ("--from", "/particles/K and /particles/Q are one dataset")),
        ("init.file", init, "h_k_is_q.h5", ("init.file", "/particles/K and /particles/Q are one dataset")),
        ("ntk --from", from_, "h_step_max.h5", ("--from", "/particles/step of row 2 is 9223372036854775807")),
        ("ntk --from", from_, "h_heads_array.h5", ("--from", "model.heads", "shape (2,)")),
        ("ntk --from", from_, "h_complete_string.h5", ("--from", "/particles.complete", "not an integer")),
        ("ntk --from", from_, "h_q_external.h5", ("--from", "/particles/Q is an external link")),
        ("ntk --from", from_, "h_tokens_virtual.h5", ("--from", "/data/tokens", "virtual dataset")),
        ("init.file", init, "h_complete_array.h5", ("init.file", "/particles.complete", "shape (2,)")),
        ("init.file", init, "h_complete_string.h5", ("init.file", "/particles.complete", "not an integer")),
        ("init.file", init, "h_complete_float.h5", ("init.file", "/particles.complete", "not an integer")),
        ("init.file", init, "h_complete_100.h5", ("init.file", "/particles.complete = 100", "3 rows")),
        ("init.file", init, "h_q_float32.h5", ("init.file", "/particles/Q is float32")),
        ("init.file", init, "h_q_external.h5", ("init.file", "/particles/Q is an external link")),
        ("init.file", init, "h_particles_soft.h5", ("init.file", "/particles is a soft link")),
        ("restart", restart, "h_q_unwritten.h5", ("--restart", "/particles/Q")),
        ("ntk --from", from_, "h_q_unwritten.h5", ("--from", "/particles/Q holds values that were never written",
                                                     "row 2")),
        ("init.file", init, "h_q_unwritten.h5", ("init.file", "/particles/Q holds values that were never written")),
        ("data.file", data, "h_data_unwritten.h5", ("data.file", "/data/tokens holds values that were never written",
                                                     "row 0")),
        ("data.file", data, "h_data_contiguous_unwritten.h5", ("data.file", "/data/tokens", "never allocated")),
        ("data.file", data, "h_data_virtual.h5", ("data.file", "/data/tokens", "virtual dataset", "does not exist")),
        ("data.file", data, "h_data_external_raw.h5", ("data.file", "/data/tokens keeps its data in", "external")),
        ("data.file", data, "h_data_compound.h5", ("data.file", "/data/tokens is of type compound")),
        ("data.file", data, "h_data_longdouble.h5", ("data.file", "/data/tokens is float128", "float64")),
    ]
    return [Case(f"hostile {path} {file} [{ranks} ranks]", make(file), expect, (ranks,))
            for path, make, file, expect in table for ranks in (1, 2)]


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isfile(os.path.join(sys.argv[1], "good.h5")):
        sys.exit("usage: hostile_files.py FOLDER (a folder holding a valid training run file good.h5)")
    make_corpus(sys.argv[1])
