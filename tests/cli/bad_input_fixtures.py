"""The fixtures of bad_inputs.py: a valid training and forward run file, INI
files, data files, copies of the run file damaged with h5py, the
hostile-file corpus (hostile_files.py) and the special files (a FIFO, a link
to it, a character device as root, data files that reach the FIFO)."""
import os
import shutil
import stat
import sys

import h5py
import numpy as np

import edge_cases
import hostile_files
import petsc_output_cases


def h5(path, **datasets):
    with h5py.File(path, "w") as f:
        for name, data in datasets.items():
            f[name.replace("__", "/")] = data


def replace(f, path, data, **kw):
    del f[path]
    f.create_dataset(path, data=data, **kw)


damaged = hostile_files.changed_copy


def make_fixtures(fx, mpirun, run):
    """The fixtures in fx: two runs of mft (`mpirun(ranks, args, cwd)`, the
    keys `run`), INI files, data files and damaged copies of the run file."""
    for args in (["train", *run, "--train.steps", "4", "--output.file", "good.h5"],
                 ["train", *run, "--train.method", "adam", "--train.steps", "4", "--output.file", "adam.h5"],
                 ["forward", *run, "--output.file", "fwd.h5"]):
        rc, _, err = mpirun(2, args, fx)
        if rc != 0:
            sys.exit(f"FAIL: fixture `mft {' '.join(args)}` exited {rc}: {err.decode()[-2000:]}")
    for p in os.listdir(fx):  # trajectory folders of the fixture runs
        if p.startswith("TS-data"):
            shutil.rmtree(os.path.join(fx, p))

    ini = {"typo.ini": b"[model]\nheads = 4\nslises = 3\n",
           "nan.ini": b"[init]\nsigma_v = big\n",
           "dup.ini": b"[model]\nheads = 3\nheads = 4\n",
           "syntax.ini": b"[model]\nheads = 4\nthis line has no equals sign\n",
           "nosection.ini": b"heads = 4\n[model]\nslices = 3\n",
           "header.ini": b"[model\nheads = 4\n",
           "section.ini": b"[modle]\nheads = 4\n",
           "ctrl.ini": b"[model]\nheads = 3\x01\n",
           "empty.ini": b"[model]\nheads =\n",
           "ok.ini": b"[model]\nheads = 4\n"}
    for name, text in ini.items():
        with open(os.path.join(fx, name), "wb") as f:
            f.write(text)
    os.mkdir(os.path.join(fx, "adir"))
    with open(os.path.join(fx, "text.h5"), "w") as f:
        f.write("not HDF5\n")
    with open(os.path.join(fx, "good.h5"), "rb") as f:
        head = f.read(3000)
    with open(os.path.join(fx, "truncated.h5"), "wb") as f:
        f.write(head)
    shutil.copyfile(os.path.join(fx, "good.h5"), os.path.join(fx, "exists.h5"))
    shutil.copyfile(os.path.join(fx, "good.h5"), os.path.join(fx, "rs.h5"))

    p = lambda n: os.path.join(fx, n)
    z = np.zeros
    nan = z((3, 4, 8)); nan[1, 2, 3] = np.nan
    h5(p("data.h5"), data__tokens=np.random.default_rng(0).normal(size=(10, 6, 8)),
       data__targets=z((10, 1)))
    os.symlink("data.h5", p("alias.h5"))
    h5(p("foreign.h5"), data__tokens=z((2, 3, 8)))
    h5(p("notargets.h5"), data__tokens=z((3, 4, 8)))
    h5(p("d3.h5"), data__tokens=z((3, 4, 3)), data__targets=z((3, 1)))
    h5(p("flat.h5"), data__tokens=z((3, 4)), data__targets=z((3, 1)))
    h5(p("wrongn.h5"), data__tokens=z((3, 4, 8)), data__targets=z((5, 1)))
    h5(p("nantoken.h5"), data__tokens=nan, data__targets=z((3, 1)))
    h5(p("notokens.h5"), data__tokens=z((3, 0, 8)), data__targets=z((3, 1)))
    with h5py.File(p("group.h5"), "w") as f:
        f.create_group("data/tokens")
        f["data/targets"] = z((3, 1))
    # Declared, never written: a few KiB on disk, 400 GB if read.
    with h5py.File(p("huge.h5"), "w") as f:
        f.create_dataset("data/tokens", (10**8, 64, 8), "f8", chunks=(1, 64, 8))
        f.create_dataset("data/targets", (10**8, 1), "f8", chunks=(4096, 1))

    def fixed_k(f):  # same values, but contiguous: cannot grow
        replace(f, "particles/K", f["particles/K"][...], chunks=None, maxshape=None)

    def q_shape(shape):
        return lambda f: replace(f, "particles/Q", z(shape), chunks=(1, 1) + shape[2:],
                                 maxshape=(None,) + shape[1:])

    def strings(f):
        replace(f, "particles/step", np.array([b"0.0", b"2.0", b"4.0"]),
                chunks=(64,), maxshape=(None,))

    damaged(fx, "heads4.h5", q_shape((3, 3, 4, 8, 8)))
    damaged(fx, "dh7.h5", q_shape((3, 3, 5, 7, 8)))
    damaged(fx, "nov.h5", lambda f: f.__delitem__("particles/V"))
    damaged(fx, "fixedk.h5", fixed_k)
    damaged(fx, "shortq.h5", lambda f: f["particles/Q"].resize(2, axis=0))
    damaged(fx, "strstep.h5", strings)
    damaged(fx, "shortrisk.h5", lambda f: f["history/risk"].resize(3, axis=0))
    damaged(fx, "nohstep.h5", lambda f: f.__delitem__("history/step"))
    damaged(fx, "complete9.h5", lambda f: f["particles"].attrs.__setitem__("complete", 9))
    damaged(fx, "tokd7.h5", lambda f: replace(f, "data/tokens", z((10, 6, 7))))
    damaged(fx, "noconfkey.h5", lambda f: f["config"].attrs.__delitem__("model.heads"))

    def gzip_q(f):  # the same values, compressed: parallel appends need mft's layout
        q = f["particles/Q"]
        replace(f, "particles/Q", q[...], chunks=q.chunks, maxshape=q.maxshape, compression="gzip")

    def nan_token(f):
        f["data/tokens"][1, 2, 3] = np.nan

    def nan_snapshot(f):  # the last complete snapshot, which a restart reads
        f["particles/Q"][int(f["particles"].attrs["complete"]) - 1, 0, 1, 2, 3] = np.nan

    def adam_state(name, change):  # Adam's state that cannot be, in the snapshot a restart reads
        shutil.copyfile(p("adam.h5"), p(name))
        with h5py.File(p(name), "r+") as f:
            change(f, int(f["particles"].attrs["complete"]) - 1)

    adam_state("adam_negv.h5", lambda f, row: f["optimizer/v_Q"].__setitem__((row, 0, 1, 0, 0), -1.0))
    adam_state("adam_tneg.h5", lambda f, row: f["optimizer/t"].__setitem__(row, -5))
    adam_state("adam_tpast.h5", lambda f, row: f["optimizer/t"].__setitem__(row, 5))
    adam_state("adam_tmax.h5", lambda f, row: f["optimizer/t"].__setitem__(row, 2**63 - 1))
    damaged(fx, "gzipq.h5", gzip_q)
    damaged(fx, "nantok.h5", nan_token)
    damaged(fx, "nansnap.h5", nan_snapshot)
    for name, text in (("self.opts", f"-options_file {p('self.opts')}\n"),
                       ("pair_a.opts", f"# a pair\n-options_file {p('pair_b.opts')}\n"),
                       ("pair_b.opts", f"-depth_ts_monitor\n-options_file {p('pair_a.opts')}  # back\n")):
        with open(p(name), "w") as f:
            f.write(text)
    with open(p("nul.ini"), "wb") as f:
        f.write(b"[model]\nheads = 4\0junk\n")
    with open(p("big.ini"), "wb") as f:
        f.write(b"# " + b"x" * (1 << 20) + b"\n[model]\nheads = 4\n")
    hostile_files.make_corpus(fx)
    edge_cases.make_files(fx)
    petsc_output_cases.make_files(fx)


def make_special_files(sp):
    """A FIFO, a link to it, a data file whose tokens are an external link to
    it, and (as root) a character device like /dev/null, in `sp`."""
    os.mkfifo(os.path.join(sp, "fifo"))
    os.symlink("fifo", os.path.join(sp, "fifo-link"))
    if os.geteuid() == 0:
        os.mknod(os.path.join(sp, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    with h5py.File(os.path.join(sp, "elink.h5"), "w") as f:
        f["data/tokens"] = h5py.ExternalLink("fifo", "/data/tokens")
        f["data/targets"] = np.zeros((3, 1))
    with h5py.File(os.path.join(sp, "external.h5"), "w") as f:  # raw data kept in the FIFO
        f.create_dataset("data/tokens", (3, 4, 8), "f8", external=[(os.path.join(sp, "fifo"), 0, 3 * 4 * 8 * 8)])
        f["data/targets"] = np.zeros((3, 1))
    with h5py.File(os.path.join(sp, "virtual.h5"), "w") as f:  # a virtual dataset with the FIFO as source
        layout = h5py.VirtualLayout(shape=(3, 4, 8), dtype="f8")
        layout[...] = h5py.VirtualSource("fifo", "data/tokens", shape=(3, 4, 8))
        f.create_virtual_dataset("data/tokens", layout)
        f["data/targets"] = np.zeros((3, 1))
