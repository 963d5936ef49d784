#!/usr/bin/env python3
"""Faults of the file system and of other processes, as a batch job meets them.

- A write that fails on one rank (ENOSPC injected below MPI-IO by the
  LD_PRELOAD library MFT_IO_FAULT_LIB, on that rank alone, late in a run and
  early) ends every rank within the time limit: exit 1, one line `mft: error:
  output.file = F: writing the snapshot of step S: No space left on device
  ...`, never a hang or a segfault. The file holds its complete snapshots: a
  copy continues with --restart to the last step, bit for bit against an
  uninterrupted run.
- A full file system (a 600 KiB tmpfs, when this runs as root and may
  mount): the run stops in one line with the file at its last snapshot; a
  restart in place on the file system, filled up by another file, stops
  before it changes anything; copied to a larger one, the file continues
  bit for bit.
- A file whose last snapshot was cut short (rows past /particles.complete
  and /history.complete, ragged) and which holds objects mft does not know
  restarts bit for bit and keeps those objects.
- A file that another process (h5py, with HDF5's file locking on or off)
  holds open for writing is refused for restart, unchanged.

Environment (ctest sets it): MFT, MPIEXEC, MFT_IO_FAULT_LIB and the
OMPI_*/OPENBLAS/HDF5 variables of tests/cli/common.sh.
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

LIMIT_S = 120  # a run still going after this is a hang (generous for a busy machine)
# Small runs that write a snapshot every step, with optimiser state (adam).
RUN = ["--model.heads", "16", "--model.slices", "2", "--data.sequences", "8", "--data.tokens", "4",
       "--output.snapshot_every", "1", "--train.method", "adam", "--train.steps", "12"]
# The full-disk run: small snapshots, so that a 600 KiB file system holds several.
DISK_RUN = ["--model.heads", "8", "--model.slices", "2", "--data.sequences", "8", "--data.tokens", "4",
            "--output.snapshot_every", "1", "--train.steps", "60"]
failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL: {what}", flush=True)


def mft(ranks, args, cwd, fault=None):
    """mft under mpiexec in its own session, its ranks given the variables of
    `fault` (with_fault); (rc, stdout, stderr, seconds); rc is None after
    LIMIT_S (the whole session is killed then)."""
    exports = [x for k, v in (fault or {}).items() for x in ("-x", f"{k}={v}")]
    cmd = [os.environ["MPIEXEC"], "-q", "-n", str(ranks), *exports, os.environ["MFT"], *args]
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=LIMIT_S)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = None
    seconds = time.monotonic() - start
    subprocess.run(["pkill", "-9", "-s", str(p.pid)], check=False)  # ranks outliving mpiexec
    if rc is None:
        out, err = p.communicate()
    return rc, out.decode(errors="replace"), err.decode(errors="replace"), seconds


def with_fault(rank=None, after=None, report=None):
    """The variables that make the ranks load the fault library (see
    tests/fault/io_fault.c): writes to run.h5 on `rank` (every rank: None)
    fail once `after` bytes are written, or are counted into `report`."""
    env = {"LD_PRELOAD": os.environ["MFT_IO_FAULT_LIB"], "MFT_IO_FAULT_FILE": "run.h5"}
    if rank is not None:
        env["MFT_IO_FAULT_RANK"] = str(rank)
    if after is not None:
        env["MFT_IO_FAULT_AFTER"] = str(after)
    if report is not None:
        env["MFT_IO_FAULT_REPORT"] = report
    return env


def one_error_line(name, rc, err, seconds, want_rc, *needles):
    """Checks that a run ended with `want_rc` and one `mft: error:` line
    holding every needle; True when it did."""
    lines = [line for line in err.splitlines() if line.startswith("mft: error: ")]
    problems = []
    if rc is None:
        problems.append(f"still running after {LIMIT_S} s: a hang")
    elif rc != want_rc:
        problems.append(f"exit {rc}, not {want_rc}")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines `mft: error:`, not 1")
    for needle in needles:
        if not any(needle in line for line in lines):
            problems.append(f"the error line does not name {needle!r}")
    if any(word in err for word in ("Segmentation", "signal 11", "core dumped", "Traceback")):
        problems.append("a crash on stderr")
    if problems:
        fail(f"{name}: " + "; ".join(problems) + f" (after {seconds:.1f} s); stderr:\n{err[-1500:]}")
        return False
    print(f"ok: {name} ({seconds:.1f} s): {lines[0]}", flush=True)
    return True


def differences(a, b):
    """What differs between two training run files in their complete rows:
    every /particles and /optimizer dataset, every /history column but
    wall_time. [] when they agree bit for bit."""
    out = []
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for group in ("particles", "optimizer", "history"):
            if (group in fa) != (group in fb):
                out.append(f"/{group} in one file only")
                continue
            if group not in fa:
                continue
            counts = "history" if group == "history" else "particles"
            na, nb = (int(f[counts].attrs["complete"]) for f in (fa, fb))
            if na != nb:
                out.append(f"/{counts}.complete {na} and {nb}")
                continue
            for name, ds in fb[group].items():
                if name == "wall_time" or not isinstance(ds, h5py.Dataset):
                    continue
                if name not in fa[group] or not np.array_equal(fa[group][name][:na], ds[:nb]):
                    out.append(f"/{group}/{name}")
    return out


def same_as(name, path, reference):
    diff = differences(path, reference)
    if diff:
        fail(f"{name}: differs from the uninterrupted run in {', '.join(diff[:6])}")
    else:
        print(f"ok: {name}: bit for bit the uninterrupted run", flush=True)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def restart_copy(name, ranks, source, work, args, reference):
    """Copies `source` into `work`, continues it with --restart to the last
    step and compares it with `reference`."""
    copy = os.path.join(work, "continued.h5")
    shutil.copyfile(source, copy)
    rc, _, err, seconds = mft(ranks, ["train", *args, "--restart", copy], work)
    if rc != 0:
        fail(f"{name}: --restart of the copy: exit {rc} after {seconds:.1f} s: {err[-800:]}")
        return
    same_as(name, copy, reference)


# ---------------------------------------------------------------- cases

def injected_failures(work):
    references = {}
    for ranks in (1, 2):
        rc, _, err, _ = mft(ranks, ["train", *RUN, "--output.file", f"ref{ranks}.h5"], work)
        if rc != 0:
            sys.exit(f"FAIL: the uninterrupted run on {ranks} ranks: exit {rc}: {err[-1000:]}")
        references[ranks] = os.path.join(work, f"ref{ranks}.h5")
    # The bytes each rank writes to its file in the whole run, to place faults.
    totals = {}
    for ranks in (1, 2):
        report = os.path.join(work, f"bytes{ranks}.txt")
        rc, _, err, _ = mft(ranks, ["train", *RUN, "--output.file", "run.h5"], work, with_fault(report=report))
        os.remove(os.path.join(work, "run.h5"))
        with open(report) as f:
            for line in f:
                rank, count = line.split()
                totals[ranks, int(rank)] = int(count)
        if rc != 0 or (ranks, ranks - 1) not in totals:
            sys.exit(f"FAIL: counting the bytes of a run (exit {rc}; {totals}): {err[-1000:]}")
    # (ranks, the failing rank, where in its bytes): a late snapshot on
    # either rank, on one rank, and a snapshot early in the run.
    for ranks, rank, at in ((2, 1, 0.6), (2, 0, 0.85), (1, 0, 0.7), (2, 1, 0.15)):
        name = f"write failing on rank {rank} of {ranks} at {at:.0%} of its bytes"
        case = os.path.join(work, f"fault-{ranks}-{rank}-{at}")
        os.mkdir(case)
        rc, _, err, seconds = mft(ranks, ["train", *RUN, "--output.file", "run.h5"], case,
                                  with_fault(rank, after=int(totals[ranks, rank] * at)))
        if not one_error_line(name, rc, err, seconds, 1, "output.file = run.h5", "writing the snapshot of step",
                              "No space left on device"):
            continue
        run = os.path.join(case, "run.h5")
        if not os.path.exists(run):
            fail(f"{name}: no run.h5 (the file is published with its first snapshot)")
            continue
        restart_copy(name + ", restarted", ranks, run, case, RUN, references[ranks])


def full_disk(work):
    disk = os.path.join(work, "disk")
    os.mkdir(disk)
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", disk], capture_output=True).returncode == 0
    if not mounted:
        print("skipped: the full file system (mounting a 600 KiB tmpfs needs root and the right to mount)")
        return
    try:
        rc, _, err, _ = mft(2, ["train", *DISK_RUN, "--output.file", "ref-disk.h5"], work)
        if rc != 0:
            fail(f"full disk: the uninterrupted run: exit {rc}: {err[-800:]}")
            return
        rc, _, err, seconds = mft(2, ["train", *DISK_RUN, "--output.file", "run.h5"], disk)
        if not one_error_line("a 600 KiB file system filled", rc, err, seconds, 1, "output.file = run.h5",
                              "No space left on device", "mft train --restart run.h5"):
            return
        run = os.path.join(disk, "run.h5")
        before = sha(run)
        # What the stop freed (its unused reservation) is taken by another file.
        filler = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while os.write(filler, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(filler)
        rc, _, err, seconds = mft(2, ["train", *DISK_RUN, "--restart", "run.h5"], disk)
        one_error_line("a restart in place on the full file system", rc, err, seconds, 1, "--restart = run.h5",
                       "dropping its rows after the snapshot", "No space left on device")
        if sha(run) != before:
            fail("the restart that found no room on the full file system changed the file")
        restart_copy("the full file system's file, copied to a larger one", 2, run, work, DISK_RUN,
                     os.path.join(work, "ref-disk.h5"))
    finally:
        subprocess.run(["umount", "-l", disk], check=False)


def cut_short_with_strangers(work):
    """A run stopped at step 6 whose file also holds half a snapshot and half
    a history write past its counts, and objects of someone else's."""
    case = os.path.join(work, "cut")
    os.mkdir(case)
    first = [a if a != "12" else "6" for a in RUN]
    rc, _, err, _ = mft(2, ["train", *first, "--output.file", "run.h5"], case)
    if rc != 0:
        fail(f"cut short: the first six steps: exit {rc}: {err[-800:]}")
        return
    run = os.path.join(case, "run.h5")
    long_name = "note." + "x" * 300
    with h5py.File(run, "r+") as f:
        for group in ("particles", "optimizer"):
            for ds in f[group].values():
                ds.resize(ds.shape[0] + 1, axis=0)  # a row of fill values, never completed
        for name, ds in f["history"].items():
            ds.resize(ds.shape[0] + (2 if name == "risk" else 1), axis=0)  # ragged past the count
        f["particles/notes"] = np.arange(3.0)
        f.create_group("history/annotations")
        f["config"].attrs[long_name] = "kept"
    rc, _, err, seconds = mft(2, ["train", *RUN, "--restart", "run.h5"], case)
    if rc != 0:
        fail(f"cut short: --restart: exit {rc} after {seconds:.1f} s: {err[-800:]}")
        return
    same_as("a snapshot cut short, restarted", run, os.path.join(work, "ref2.h5"))
    with h5py.File(run, "r") as f:
        kept = ("notes" in f["particles"] and "annotations" in f["history"]
                and f["config"].attrs.get(long_name) == "kept")
    if kept:
        print("ok: objects mft does not know were left alone", flush=True)
    else:
        fail("cut short: the restart removed objects it does not know")


def held_by_a_writer(work):
    case = os.path.join(work, "held")
    os.mkdir(case)
    run = os.path.join(case, "run.h5")
    shutil.copyfile(os.path.join(work, "ref2.h5"), run)
    hold = ("import sys, h5py, time\n"
            "f = h5py.File(sys.argv[1], 'r+')\n"
            "print('holding', flush=True)\n"
            "time.sleep(600)\n")
    for locking in ("TRUE", "FALSE"):
        holder = subprocess.Popen([sys.executable, "-c", hold, run], stdout=subprocess.PIPE,
                                  env={**os.environ, "HDF5_USE_FILE_LOCKING": locking})
        # mft's ranks must not inherit the holder's variable: only the writer holds the file.
        try:
            if holder.stdout.readline().strip() != b"holding":
                fail(f"held (locking {locking}): h5py could not open the file r+")
                continue
            before = sha(run)  # as the writer left it (opening r+ may write)
            rc, _, err, seconds = mft(2, ["train", *RUN, "--restart", run], case)
            one_error_line(f"a restart while h5py holds the file r+ (HDF5 file locking {locking})", rc, err,
                           seconds, 2, "--restart = " + run, "writ")
            if sha(run) != before:
                fail(f"held (locking {locking}): the refused restart changed the file")
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait()


def main():
    for key in ("MFT", "MPIEXEC", "MFT_IO_FAULT_LIB"):
        if key not in os.environ:
            sys.exit(f"{key} is not set (ctest sets it)")
    work = tempfile.mkdtemp(prefix="mft-faults-")
    try:
        injected_failures(work)
        full_disk(work)
        cut_short_with_strangers(work)
        held_by_a_writer(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
