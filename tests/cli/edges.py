#!/usr/bin/env python3
"""The edges of a process, end to end (what bad_inputs.py cannot say in a row):

- a stop signal during start-up (sent once the process has installed its
  handler, read from /proc/PID/status, while MPI and PETSc start) ends the
  command with exit 75 and one line, nothing written; should the signal come
  after the set-up on a slow machine, the run stops as a training run does
  (exit 75, a complete file): either way never a kill;
- a run whose output folder is removed under it ends with exit 1 and a line
  saying so, never "wrote";
- an address-space limit (ulimit -v) bounds the memory estimate: the header
  names it, and a run larger than it is refused at once (exit 2), never left
  spinning in OpenBLAS;
- a restart's log lies beside its run file unless given: a received file's
  /config cannot send it elsewhere;
- INI files as editors and users write them: a byte-order mark, a '#' inside
  a path, a comment after a value; a subnormal number is a number.

Environment (ctest sets it): MFT, MPIEXEC and the OMPI_*/OPENBLAS/HDF5
variables of tests/cli/common.sh.
"""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

LIMIT_S = 300  # a command still running after this is a hang (generous for a busy machine)
RUN = ["--model.heads", "5", "--model.slices", "3", "--data.sequences", "10", "--data.tokens", "6"]
failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL: {what}", flush=True)


def mft(args, cwd, ranks=1, limit_as=None):
    """mft under mpiexec; (rc, stdout, stderr); rc None after LIMIT_S."""
    cap = (lambda: resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))) if limit_as else None
    p = subprocess.run([os.environ["MPIEXEC"], "-q", "-n", str(ranks), os.environ["MFT"], *args], cwd=cwd,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=LIMIT_S, preexec_fn=cap)
    return p.returncode, p.stdout, p.stderr


def handler_installed(pid, sig):
    """Whether process pid catches `sig` (its SigCgt mask)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except OSError:
        pass
    return False


def stop_during_startup(work):
    """mft started alone (a singleton, no mpirun between) and sent SIGTERM
    as soon as it catches it."""
    out = os.path.join(work, "startup.h5")
    p = subprocess.Popen([os.environ["MFT"], "train", *RUN, "--train.steps", "200", "--output.file", out],
                         cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    deadline = time.monotonic() + LIMIT_S
    while not handler_installed(p.pid, signal.SIGTERM) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    p.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = p.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        return fail("a SIGTERM during start-up: still running after the limit (a hang)")
    lines = stderr.splitlines()
    if p.returncode == 75 and lines == ["mft: stopped by SIGTERM during start-up, before anything was "
                                        "computed or written"]:
        if os.path.exists(out) or any(n.startswith(".startup") for n in os.listdir(work)):
            return fail(f"a stop during start-up left files: {os.listdir(work)}")
        print("ok: SIGTERM during start-up: exit 75, one line, nothing written")
    elif p.returncode == 75 and "stopped by SIGTERM after step" in stdout and os.path.exists(out):
        print("ok: SIGTERM reached the run after its set-up (a slow machine): a clean stop, exit 75")
    else:
        fail(f"SIGTERM during start-up: exit {p.returncode}, stderr {stderr[-600:]!r}, stdout {stdout[-300:]!r}")


def output_removed(work):
    """The output folder removed while a run writes: exit 1, never 'wrote'."""
    folder = os.path.join(work, "gone")
    os.mkdir(folder)
    out = os.path.join(folder, "run.h5")
    p = subprocess.Popen([os.environ["MPIEXEC"], "-q", "-n", "2", os.environ["MFT"], "train", *RUN,
                          "--train.steps", "1000000", "--output.snapshot_every", "1", "--output.file", out],
                         cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    deadline = time.monotonic() + LIMIT_S
    while not os.path.exists(out) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    shutil.rmtree(folder)
    p.send_signal(signal.SIGUSR1)  # mpirun forwards it: the run stops cleanly, writing into the removed file
    try:
        stdout, stderr = p.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        return fail("output folder removed: still running after the limit")
    if p.returncode != 1 or "was removed" not in stderr or "wrote " in stdout or len(stderr.splitlines()) != 1:
        return fail(f"output folder removed: exit {p.returncode}, stderr {stderr[-600:]!r}, stdout tail "
                    f"{stdout[-200:]!r}")
    print(f"ok: output folder removed: exit 1, {stderr.strip()}")


def address_space_limit(work):
    """Under ulimit -v the header names the limit, and a run beyond it is refused."""
    cap = 3 << 30
    rc, out, err = mft(["forward", *RUN, "--dry-run"], work, limit_as=cap)
    memory = [line for line in out.splitlines() if "memory:" in line]
    if rc != 0 or not memory or "ulimit -v" not in memory[0]:
        return fail(f"ulimit -v {cap >> 20} MiB: exit {rc}, memory line {memory}, stderr {err[-400:]!r}")
    print(f"ok: ulimit -v: {memory[0].lstrip('# ')}")
    rc, out, err = mft(["train", "--model.heads", "5", "--model.slices", "3", "--data.sequences", "20000",
                        "--data.tokens", "64", "--train.steps", "1", "--output.file", "big.h5"], work, limit_as=cap)
    if rc != 2 or "ulimit -v" not in err or len(err.splitlines()) != 1 or os.path.exists(os.path.join(work, "big.h5")):
        return fail(f"a run beyond ulimit -v: exit {rc}, stderr {err[-600:]!r}")
    print(f"ok: a run beyond ulimit -v refused: {err.strip()[:160]}...")


def restart_log(work):
    """A received file whose /config names a log elsewhere: the restart's log
    goes beside the run file, under its name."""
    here, elsewhere = os.path.join(work, "received"), os.path.join(work, "elsewhere")
    os.mkdir(here)
    os.mkdir(elsewhere)
    run = os.path.join(here, "run.h5")
    rc, _, err = mft(["train", *RUN, "--train.steps", "2", "--output.file", run], work)
    if rc != 0:
        return fail(f"restart log: the first run exited {rc}: {err[-400:]}")
    with h5py.File(run, "r+") as f:
        f["config"].attrs["output.log"] = os.path.join(elsewhere, "progress.jsonl")
    rc, _, err = mft(["train", "--restart", run, "--train.steps", "4"], work)
    beside = os.path.join(here, "progress.jsonl")
    if rc != 0 or os.listdir(elsewhere) or not os.path.exists(beside):
        return fail(f"restart log: exit {rc}, elsewhere holds {os.listdir(elsewhere)}, beside: "
                    f"{os.path.exists(beside)}; {err[-300:]}")
    print("ok: a restart's log lies beside its run file, not where the received file said")
    # A name that is another file beside it (here the run file of another
    # run): refused, never appended to.
    other = os.path.join(here, "other.h5")
    shutil.copyfile(run, other)
    with h5py.File(run, "r+") as f:
        f["config"].attrs["output.log"] = "other.h5"
    before = open(other, "rb").read()
    rc, _, err = mft(["train", "--restart", run, "--train.steps", "6"], work)
    if rc != 2 or "not an mft log" not in err or open(other, "rb").read() != before:
        return fail(f"a received log name of another file: exit {rc}, {err[-300:]!r}")
    print("ok: a received log name that is another file is refused, the file unchanged")


def ini_as_written(work):
    """A BOM, '#' inside a path, a comment after a value, a subnormal."""
    ini = os.path.join(work, "edited.ini")
    with open(ini, "wb") as f:
        f.write(b"\xef\xbb\xbf[model]\nheads = 4 ; four heads\n[output]\nfile = run#1.h5  # the first\n"
                b"[init]\nsigma_v = 1e-310\n")
    rc, out, err = mft(["forward", "--config", ini, "--dry-run"], work)
    lines = out.splitlines()
    sigma = [float(line.split("=")[1]) for line in lines if line.startswith("sigma_v = ")]
    if rc != 0 or "heads = 4" not in lines or "file = run#1.h5" not in lines or sigma != [1e-310]:
        return fail(f"INI as written: exit {rc}, stderr {err[-300:]!r}; heads, file or sigma_v ({sigma}) not as "
                    "written")
    print("ok: an INI file with a BOM, a '#' in a path and comments after values reads as meant")


def main():
    os.environ.setdefault("MPIEXEC", shutil.which("mpiexec") or "mpiexec")
    for check in (stop_during_startup, output_removed, address_space_limit, restart_log, ini_as_written):
        work = tempfile.mkdtemp(prefix="mft-edges-")
        try:
            check(work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
