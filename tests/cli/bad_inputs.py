#!/usr/bin/env python3
"""Bad input, one table row per case.

Every case must stop every rank with exit status 2 and exactly one stderr
line `mft: error: KEY = VALUE: why` naming the key, file or dataset at fault,
leave nothing behind in its (empty) working folder, leave no rank hanging and
leave every input file untouched. Special files (a FIFO, a character device
when run as root) stand beside the fixtures: as inputs they must be refused
before they are opened (a FIFO would block), as outputs never replaced.

Environment (ctest sets it): MFT, MPIEXEC, and the OMPI_*/OPENBLAS/HDF5
variables of tests/cli/common.sh; missing ones get the same defaults here.
Usage: python3 tests/cli/bad_inputs.py [-k REGEX] [-j JOBS]
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

import bad_input_fixtures
import edge_cases
import hostile_files
import petsc_output_cases

HERE = os.path.dirname(os.path.abspath(__file__))
ENV_DEFAULTS = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1", "OPENBLAS_NUM_THREADS": "1",
    "HDF5_USE_FILE_LOCKING": "FALSE",
}
TIMEOUT_S = 120        # a case still running after this is a hang
QUICK_S = 30           # memory-estimate refusals must not start the work
# Per-process address-space cap: a binary that ignores its memory estimate
# fails with bad_alloc instead of pushing the machine into the OOM killer.
VM_CAP = int(os.environ.get("MFT_TEST_VM_CAP", 4 << 30))  # 0: none (a sanitizer's shadow needs terabytes)
LINE = re.compile(r"mft: error: \S+ = .*: .+")
# The valid training run every restart fixture is copied from; restarts
# repeat its configuration with more steps so that a restart has work to do.
SHAPE = ["--model.slices", "3", "--data.sequences", "10",
         "--data.tokens", "6", "--output.snapshot_every", "2"]
RUN = ["--model.heads", "5", *SHAPE]


@dataclass
class Case:
    name: str
    args: list             # after `mft`; starts with the command
    expect: tuple          # each entry must occur; a tuple entry: one of them
    ranks: tuple = (2,)    # 0: mft alone, without mpiexec (a singleton: mpiexec waits 2 s after an error)
    quick: bool = False


def mpirun(ranks, args, cwd, limit=TIMEOUT_S):
    """Runs mft under mpiexec in its own process group; returns (rc, out, err);
    rc is None after a timeout (the whole group is killed then)."""
    cmd = [os.environ["MPIEXEC"], "-q", "-n", str(ranks), os.environ["MFT"], *args] if ranks else [
        os.environ["MFT"], *args]
    cap = (lambda: resource.setrlimit(resource.RLIMIT_AS, (VM_CAP, VM_CAP))) if VM_CAP else None
    # After a rank's non-zero exit mpiexec waits odls_base_sigkill_timeout
    # (+1 s) before it ends the others: one rank has none to wait for. (With
    # several, ending them at once lets mpiexec's event loop warn on stderr
    # when a rank calls MPI_Abort.)
    env = dict(os.environ, OMPI_MCA_odls_base_sigkill_timeout="0") if ranks == 1 else None
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, preexec_fn=cap, env=env)
    try:
        out, err = p.communicate(timeout=limit)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = None
    try:  # ranks that outlive mpiexec (or a hang) go with the group
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if rc is None:
        out, err = p.communicate()
    return rc, out, err


def special_kinds(sp):
    """{name: file type} of everything in `sp`, without opening anything."""
    return {n: stat.S_IFMT(os.lstat(os.path.join(sp, n)).st_mode) for n in os.listdir(sp)}


def snapshot(root):
    """Every regular file's sha256 (and every folder and link) under root."""
    seen = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            path = os.path.join(d, n)
            if os.path.islink(path):
                seen[path] = "link " + os.readlink(path)
            elif os.path.isdir(path):
                seen[path] = "dir"
            elif not os.path.isfile(path):
                seen[path] = "special"
            else:
                with open(path, "rb") as f:
                    seen[path] = hashlib.sha256(f.read()).hexdigest()
    return seen


# ---------------------------------------------------------------- the table

def make_cases(fx, sp):
    p = lambda n: os.path.join(fx, n)
    s = lambda n: os.path.join(sp, n)
    fwd = lambda *a: ["forward", *a]
    cases = []
    if os.path.exists(s("null")):
        cases.append(Case("output is a character device",
                          fwd("--output.file", s("null"), "--output.overwrite", "true"),
                          ("output.file", "character device")))
    cases += [
        # Special files: inputs refused before they are opened, outputs never replaced.
        Case("output is a FIFO", fwd("--output.file", s("fifo"), "--output.overwrite", "true"),
             ("output.file", "FIFO")),
        Case("output is a link to a FIFO", fwd("--output.file", s("fifo-link"), "--output.overwrite", "true"),
             ("output.file", "FIFO")),
        Case("INI is a FIFO", fwd("--config", s("fifo")), ("--config", "FIFO")),
        Case("INI is a character device", fwd("--config", "/dev/zero"), ("--config", "character device")),
        Case("INI larger than 1 MiB", fwd("--config", p("big.ini")), ("--config", "larger than")),
        Case("INI NUL byte", fwd("--config", p("nul.ini")), ("--config", "NUL byte")),
        Case("data file is a FIFO", fwd("--data.task", "file", "--data.file", s("fifo")), ("data.file", "FIFO")),
        Case("data external link to a FIFO", fwd("--data.task", "file", "--data.file", s("elink.h5")),
             ("data.file", "external link /data/tokens", "FIFO")),
        Case("data raw storage in a FIFO", fwd("--data.task", "file", "--data.file", s("external.h5")),
             ("data.file", "/data/tokens keeps its data in", "FIFO")),
        Case("data virtual dataset from a FIFO", fwd("--data.task", "file", "--data.file", s("virtual.h5")),
             ("data.file", "/data/tokens takes its data from", "FIFO")),
        Case("restart is a FIFO", ["train", "--restart", s("fifo")], ("--restart", "FIFO")),
        Case("ntk --from a FIFO", ["ntk", "--from", s("fifo")], ("--from", "FIFO")),
        Case("-options_file missing", fwd("-options_file", p("nosuch.opts")), ("-options_file", "nosuch.opts")),
        Case("-options_file a FIFO", fwd("-options_file", s("fifo")), ("-options_file", "FIFO")),
        Case("-options_file including itself", fwd("-options_file", p("self.opts")),
             ("-options_file", "self.opts", "includes itself")),
        Case("-options_file pair including each other", fwd("-options_file", p("pair_a.opts")),
             ("-options_file", "pair_a.opts", "pair_b.opts", "includes itself")),
        Case("a PETSc type without its name", fwd("-depth_ts_rk_type"), ("-depth_ts_rk_type", "needs a value")),
        Case("a PETSc type followed by an option", fwd("-depth_ts_rk_type", "-depth_ts_monitor"),
             ("-depth_ts_rk_type", "needs a value")),
        Case("PETSc choice", fwd("-depth_ts_rk_type", "zz"), ("-depth_ts_rk_type = zz",)),
        Case("PETSc integer", fwd("-depth_ts_max_steps", "abc"), ("-depth_ts_max_steps = abc",)),
        Case("trailing empty list entry", fwd("--readout.kind", "mean", "--readout.weights", "1,0,0,0,0,0,0,0,"),
             ("readout.weights", "empty list entry")),
        Case("key followed by a key", fwd("--output.file", "--train.steps", "2"),
             ("output.file = ''", "--train.steps")),
        Case("no command", [], ("command = ''",)),
    ]
    cases += [
        # Configuration keys and values.
        Case("unknown key", fwd("--model.hedas", "3"), ("model.hedas",)),
        Case("stray argument", fwd("stray"), ("argument", "stray")),
        Case("unknown command", ["fly"], ("command", "fly")),
        Case("zero size", fwd("--model.heads", "0"), ("model.heads = 0",)),
        Case("negative size", fwd("--data.sequences", "-5"), ("data.sequences = -5",)),
        Case("zero steps per slice", fwd("--depth.steps_per_slice", "0"), ("depth.steps_per_slice",)),
        Case("negative checkpoint spacing", ["train", "--depth.checkpoint_slices", "-2"],
             ("depth.checkpoint_slices = -2",)),
        Case("checkpoint spacing not a number", ["train", "--depth.checkpoint_slices", "some"],
             ("depth.checkpoint_slices = some",)),
        Case("zero head_dim", fwd("--model.head_dim", "0"), ("model.head_dim",)),
        Case("negative train steps", ["train", "--train.steps", "-1"], ("train.steps",)),
        Case("not a number", fwd("--init.sigma_qk", "abc"), ("init.sigma_qk = abc",)),
        Case("not an integer", fwd("--model.heads", "1.5"), ("model.heads",)),
        Case("trailing junk", fwd("--model.slices", "3abc"), ("model.slices",)),
        Case("integer overflow", fwd("--model.heads", "99999999999999999999"), ("model.heads",)),
        Case("nan step", ["train", "--train.dtau", "nan"], ("train.dtau",)),
        Case("infinite sigma", fwd("--init.sigma_v", "inf"), ("init.sigma_v",)),
        Case("empty value", fwd("--model.heads", ""), ("model.heads = ''",)),
        Case("bad choice", fwd("--readout.kind", "max"), ("readout.kind = max",)),
        Case("bad task", fwd("--data.task", "sorting"), ("data.task",)),
        Case("bad method", ["train", "--train.method", "lbfgs"], ("train.method = lbfgs",)),
        Case("batch beyond N", ["train", "--train.method", "sgd", "--train.batch", "65"], ("train.batch = 65",)),
        Case("minibatch with the flow", ["train", "--train.batch", "8"], ("train.batch = 8",)),
        Case("online with the flow", ["train", "--data.online", "true", "--train.batch", "8"],
             ("data.online = true", "takes minibatches")),
        Case("online without a batch", ["train", "--data.online", "true", "--train.method", "adam"],
             ("data.online = true", "train.batch")),
        Case("online from a file", ["train", "--data.online", "true", "--train.method", "adam", "--train.batch", "4",
                                    "--data.task", "file", "--data.file", p("d3.h5")],
             ("data.online = true", "data.task = file")),
        Case("online teacher", ["train", "--data.online", "true", "--train.method", "sgd", "--train.batch", "4",
                                "--data.task", "teacher"], ("data.online = true", "teacher")),
        Case("online not a bool", ["train", "--data.online", "1"], ("data.online = 1",)),
        Case("negative test seed", ["train", "--data.test_seed", "-1"], ("data.test_seed = -1",)),
        Case("history every 0", ["train", "--output.history_every", "0"], ("output.history_every = 0",)),
        Case("ntk between history rows", ["train", "--output.history_every", "4", "--ntk.every", "6"],
             ("ntk.every = 6", "output.history_every = 4")),
        Case("sgd with rk", ["train", "--train.method", "sgd", "--train.ts_type", "rk"], ("train.ts_type = rk",)),
        Case("Langevin with adam", ["train", "--train.method", "adam", "--train.temperature", "0.1"],
             ("train.temperature = 0.1",)),
        Case("Langevin with rk", ["train", "--train.ts_type", "rk", "--train.temperature", "0.1"],
             ("train.temperature = 0.1",)),
        Case("beta1 of one", ["train", "--train.method", "adam", "--train.beta1", "1"], ("train.beta1 = 1",)),
        Case("zero eps", ["train", "--train.method", "adam", "--train.eps", "0"], ("train.eps = 0",)),
        Case("key of an optimiser not selected", ["train", "--train.method", "flow", "--train.beta1", "0.3"],
             ("train.beta1 = 0.3", "train.method = adam")),
        Case("key of a task not selected", fwd("--families.kind", "cube"), ("families.kind = cube", "data.task = families")),
        Case("negative temperature", ["train", "--train.temperature", "-1"], ("train.temperature = -1",)),
        Case("bad activation", fwd("--model.activation", "tanh", "--model.mlp_particles", "2",
                                   "--model.mlp_width", "4"), ("model.activation",)),
        Case("bad depth TS", fwd("--depth.ts_type", "beuler"), ("depth.ts_type",)),
        Case("bad ntk part", ["ntk", "--ntk.part", "W"], ("ntk.part",)),
        Case("bad families kind", fwd("--data.task", "families", "--families.kind", "cone"),
             ("families.kind",)),
        Case("bad families values", fwd("--data.task", "families", "--families.kind", "cube",
                                        "--families.values", "a:b"), ("families.values",)),
        Case("readout weights count", fwd("--readout.kind", "mean", "--readout.weights", "1,2"),
             ("readout.weights",)),
        Case("readout coord out of range", fwd("--readout.coord", "8"), ("readout.coord",)),
        Case("bad overwrite flag", fwd("--output.overwrite", "maybe"), ("output.overwrite",)),
        Case("bad max_memory", fwd("--run.max_memory", "12Q"), ("run.max_memory",)),
        Case("negative max_memory", fwd("--run.max_memory", "-1"), ("run.max_memory",)),
        Case("zero sequence groups", fwd("--parallel.sequence_groups", "0"), ("parallel.sequence_groups",)),
        Case("sequence groups not dividing", fwd("--parallel.sequence_groups", "2"),
             ("parallel.sequence_groups", "must divide the 3 ranks"), (3,)),
        Case("more sequence groups than sequences",
             ["train", "--parallel.sequence_groups", "2", "--data.sequences", "1"], ("data.sequences",)),
        Case("key twice", fwd("--model.heads", "2", "--model.heads", "3"), ("model.heads",)),
        Case("key without value", fwd("--model.heads"), ("model.heads",)),
        Case("--config without value", fwd("--config"), ("--config",)),
        Case("forward --restart", fwd("--restart", "x"), ("--restart",)),
        Case("train --from", ["train", "--from", "x"], ("--from",)),
        Case("forward --snapshot", fwd("--snapshot", "1"), ("--snapshot",)),
        Case("control byte on the command line", fwd("--readout.kind", "max\x1b[31m"),
             ("readout.kind", ("\\x1b", "\\x1B"))),
        Case("newline on the command line", fwd("--readout.kind", "max\nquery"),
             ("readout.kind",)),
        Case("file task without a file", fwd("--data.task", "file"), ("data.file",)),
        # INI files.
        Case("INI unknown key", fwd("--config", p("typo.ini")), ("model.slises", "typo.ini")),
        Case("INI unknown section", fwd("--config", p("section.ini")), ("modle.heads", "section.ini")),
        Case("INI non-number", fwd("--config", p("nan.ini")), ("init.sigma_v = big", "nan.ini")),
        Case("INI non-number under a command-line value",
             fwd("--config", p("nan.ini"), "--init.sigma_v", "1"), ("init.sigma_v", "nan.ini")),
        Case("INI duplicate key", fwd("--config", p("dup.ini")), ("model.heads", "dup.ini")),
        Case("INI duplicate under a command-line value",
             fwd("--config", p("dup.ini"), "--model.heads", "4"), ("model.heads", "dup.ini")),
        Case("INI syntax error", fwd("--config", p("syntax.ini")),
             ("--config", "syntax.ini", "line 3")),
        Case("INI key outside a section", fwd("--config", p("nosection.ini")), ("nosection.ini",)),
        Case("INI broken section header", fwd("--config", p("header.ini")), ("header.ini",)),
        Case("INI control byte", fwd("--config", p("ctrl.ini")), ("model.heads", "\\x01")),
        Case("INI empty value", fwd("--config", p("empty.ini")), ("model.heads = ''",)),
        Case("INI missing", fwd("--config", p("nosuch.ini")), ("--config", "nosuch.ini")),
        Case("INI is a folder", fwd("--config", p("adir")), ("--config", "adir")),
        Case("INI empty name", fwd("--config", ""), ("--config = ''",)),
        # Data files.
        Case("data missing", fwd("--data.task", "file", "--data.file", p("missing.h5")),
             ("data.file", "missing.h5")),
        Case("data not HDF5", fwd("--data.task", "file", "--data.file", p("text.h5")),
             ("data.file", "text.h5")),
        Case("data truncated", ["train", "--data.task", "file", "--data.file", p("truncated.h5")],
             ("data.file", "truncated.h5")),
        Case("data is a folder", fwd("--data.task", "file", "--data.file", p("adir")),
             ("data.file", "adir")),
        Case("data without targets", fwd("--data.task", "file", "--data.file", p("notargets.h5")),
             ("/data/targets",)),
        Case("data d contradicts model.d", fwd("--data.task", "file", "--data.file", p("d3.h5"), "--model.d", "5"),
             ("model.d = 5", "d3.h5", "d = 3")),
        Case("data d_out contradicts readout.dim", fwd("--data.task", "file", "--data.file", p("d3.h5"),
                                                     "--readout.dim", "2"),
             ("d3.h5", "readout.dim = 2")),
        Case("held-out families", fwd("--data.task", "families", "--data.test_sequences", "4"),
             ("data.test_sequences = 4",)),
        Case("cross-entropy of one output", fwd("--loss.kind", "cross-entropy"), ("loss.kind = cross-entropy",)),
        Case("unknown score map", fwd("--model.attention", "cosine"), ("model.attention = cosine",)),
        Case("causal not a bool", fwd("--model.causal", "yes"), ("model.causal = yes",)),
        Case("readout.dim beyond d", fwd("--readout.dim", "9"), ("readout.dim = 9",)),
        Case("vector readout weights count", fwd("--readout.kind", "mean", "--readout.dim", "2",
                                                 "--readout.weights", "1,2,3,4,5,6,7,8"),
             ("readout.weights",)),
        Case("data tokens of rank 2", fwd("--data.task", "file", "--data.file", p("flat.h5")),
             ("flat.h5",)),
        Case("data targets of wrong N", fwd("--data.task", "file", "--data.file", p("wrongn.h5")),
             ("wrongn.h5", "/data/targets")),
        Case("data non-finite token", fwd("--data.task", "file", "--data.file", p("nantoken.h5")),
             ("nantoken.h5", "/data/tokens")),
        Case("data without tokens per sequence",
             fwd("--data.task", "file", "--data.file", p("notokens.h5")), ("notokens.h5",)),
        Case("data tokens a group", fwd("--data.task", "file", "--data.file", p("group.h5")),
             ("/data/tokens",)),
        Case("data huge unwritten", fwd("--data.task", "file", "--data.file", p("huge.h5")),
             (("data.file", "data.sequences"),), quick=True),
        # Sizes: refused by the memory estimate before any work.
        Case("heads beyond int", fwd("--model.heads", "2147483648"), ("model.heads",), quick=True),
        Case("huge forward", fwd("--data.sequences", "100000000", "--model.heads", "100000"),
             (("data.sequences", "model.heads"),), quick=True),
        Case("many sequences", ["train", "--data.sequences", "2000000"], ("data.sequences",),
             quick=True),
        Case("ntk Gram too large", ["ntk", "--data.sequences", "2000000"], ("data.sequences",),
             quick=True),
        Case("max_memory 1M", ["train", "--run.max_memory", "1M"], ("run.max_memory",), quick=True),
        # Output paths and aliasing.
        Case("output in a missing folder", fwd("--output.file", "/nonexistent/dir/out.h5"),
             ("output.file = /nonexistent/dir/out.h5",)),
        Case("output is a folder", fwd("--output.file", p("adir"), "--output.overwrite", "true"),
             ("output.file", "adir")),
        Case("output empty name", fwd("--output.file", ""), ("output.file = ''",)),
        Case("output exists", fwd("--output.file", p("exists.h5")),
             ("output.file", "output.overwrite")),
        Case("train output exists", ["train", "--output.file", p("exists.h5")],
             ("output.file", "mft train --restart", "--resume", "output.overwrite")),
        Case("resume and restart", ["train", "--resume", "--restart", p("good.h5")], ("--resume", "good.h5")),
        Case("forward --resume", fwd("--resume"), ("--resume", "only mft train")),
        Case("ntk output is its --from", ["ntk", "--from", p("good.h5"), "--output.file",
                                          p("good.h5")], ("output.file",)),
        Case("ntk output is its --from, overwrite",
             ["ntk", "--from", p("good.h5"), "--output.file", p("good.h5"),
              "--output.overwrite", "true"], ("output.file",)),
        Case("output is the data file",
             fwd("--data.task", "file", "--data.file", p("data.h5"), "--output.file", p("data.h5")),
             ("output.file",)),
        Case("output is the data file, overwrite",
             fwd("--data.task", "file", "--data.file", p("data.h5"), "--output.file", p("data.h5"),
                 "--output.overwrite", "true"), ("output.file",)),
        Case("output is the data file by a link",
             fwd("--data.task", "file", "--data.file", p("data.h5"), "--output.file", p("alias.h5"),
                 "--output.overwrite", "true"), ("output.file",)),
        Case("output is the INI file",
             fwd("--config", p("ok.ini"), "--output.file", p("ok.ini"), "--output.overwrite", "true"),
             ("output.file",)),
        Case("restart into an existing file",
             ["train", *RUN, "--train.steps", "6", "--restart", p("rs.h5"), "--output.file",
              p("exists.h5")], ("output.file",)),
        Case("restart into a missing folder",
             ["train", *RUN, "--train.steps", "6", "--restart", p("rs.h5"), "--output.file",
              p("nodir/out.h5")], ("output.file",)),
        # ntk's inputs.
        Case("ntk --from missing", ["ntk", "--from", p("nosuch.h5")], ("--from", "nosuch.h5")),
        Case("ntk --from not HDF5", ["ntk", "--from", p("text.h5")], ("--from", "text.h5")),
        Case("ntk --snapshot out of range", ["ntk", "--from", p("good.h5"), "--snapshot", "99"],
             ("--snapshot",)),
        # Particles from a file (init.file): its shapes are the run's, its
        # snapshot one it has, its values finite, and it is not the output.
        Case("init.file missing", fwd(*RUN, "--init.file", p("nosuch.h5")), ("init.file", "nosuch.h5")),
        Case("init.file not HDF5", fwd(*RUN, "--init.file", p("text.h5")), ("init.file", "text.h5")),
        Case("init.file without particles", fwd(*RUN, "--init.file", p("data.h5")), ("init.file", "/particles")),
        Case("init.file of other heads", fwd(*SHAPE, "--model.heads", "4", "--init.file", p("good.h5")),
             ("init.file", "/particles/Q", "4 heads")),
        Case("init.file of other slices", ["train", "--model.heads", "5", "--model.slices", "2",
                                           "--init.file", p("good.h5")], ("init.file", "model.slices = 2")),
        Case("init.snapshot beyond the file", fwd(*RUN, "--init.file", p("good.h5"), "--init.snapshot", "9"),
             ("init.snapshot = 9", "good.h5")),
        Case("init.file non-finite", fwd(*RUN, "--init.file", p("nansnap.h5")), ("init.file", "non-finite")),
        Case("init.file is the output", ["train", *RUN, "--init.file", p("rs.h5"), "--output.file", p("rs.h5"),
                                         "--output.overwrite", "true"], ("output.file", "init.file")),
        # PETSc options.
        Case("implicit depth TS", fwd("-depth_ts_type", "beuler"), ("-depth_ts_type",)),
        Case("recomputing depth trajectory", ["train", *RUN, "-depth_ts_trajectory_solution_only"],
             ("-depth_ts_trajectory_solution_only", "every stage")),
        Case("misspelt PETSc option", fwd("-depth_ts_tpye", "euler"), ("-depth_ts_tpye = euler", "mft forward")),
        Case("unknown RK tableau", fwd("--depth.rk_type", "9z"), ("depth.rk_type = 9z",)),
    ]
    # Restarts, on the rank count of the file and on another.
    restart = [
        ("missing", "nosuch.h5", ("nosuch.h5",)),
        ("truncated", "truncated.h5", ("truncated.h5",)),
        ("foreign HDF5", "foreign.h5", ("foreign.h5",)),
        ("forward run file", "fwd.h5", ("fwd.h5",)),
        ("Q of 4 heads", "heads4.h5", ("/particles/Q",)),
        ("Q of d_h 7", "dh7.h5", ("/particles/Q",)),
        ("V removed", "nov.h5", ("/particles/V",)),
        ("K not extensible", "fixedk.h5", ("/particles/K",)),
        ("Q shorter than step", "shortq.h5", ("/particles/Q",)),
        ("step as strings", "strstep.h5", ("/particles/step",)),
        ("risk shorter than step", "shortrisk.h5", ("/history/risk",)),
        ("history step removed", "nohstep.h5", ("/history/step",)),
        ("complete beyond rows", "complete9.h5", ("/particles",)),
        ("tokens of d 7", "tokd7.h5", ("/data/tokens",)),
        ("config key missing", "noconfkey.h5", ("model.heads",)),
        ("compressed Q", "gzipq.h5", ("/particles/Q", "filters")),
        ("non-finite token", "nantok.h5", ("/data/tokens", "non-finite")),
        ("non-finite snapshot", "nansnap.h5", ("/particles/Q", "non-finite")),
        ("Adam's second moment negative", "adam_negv.h5", ("/optimizer/v_*", "negative value, -1")),
        ("Adam's t negative", "adam_tneg.h5", ("/optimizer/t of the snapshot of step 4 is -5", "[0, 4]")),
        ("Adam's t past the step", "adam_tpast.h5", ("/optimizer/t", "is 5", "[0, 4]")),
        ("Adam's t at 2^63 - 1", "adam_tmax.h5", ("/optimizer/t", "is 9223372036854775807")),
    ]
    for ranks in (2, 3):
        for name, file, expect in restart:
            cases.append(Case(f"restart {name} [{ranks} ranks]",
                              ["train", *RUN, "--train.steps", "6", "--restart", p(file)],
                              ("--restart",) + expect, (ranks,)))
        cases.append(Case(f"restart other heads [{ranks} ranks]",
                          ["train", "--model.heads", "6", *SHAPE, "--train.steps", "6",
                           "--restart", p("good.h5")], ("model.heads",), (ranks,)))
    return (cases + hostile_files.cases(fx, Case, RUN, SHAPE) + edge_cases.cases(fx, sp, Case) +
            petsc_output_cases.cases(fx, sp, Case, RUN))


# ---------------------------------------------------------------- checks

def check(case, ranks, case_dir, fx, before, sp, kinds):
    """Runs one case; returns (problems, the stderr line)."""
    limit = QUICK_S if case.quick else TIMEOUT_S
    rc, out, err = mpirun(ranks, case.args, case_dir, limit)
    text = err.decode("utf-8", "backslashreplace")
    line = text.rstrip("\n")
    bad = []
    if rc is None:
        why = " (the memory estimate must refuse before any work)" if case.quick else ""
        bad.append(f"hang: still running after {limit} s, killed{why}")
    elif rc != 2:
        bad.append(f"exit status {rc}, not 2")
    lines = err.count(b"\n")
    if lines != 1 or not err.endswith(b"\n"):
        bad.append(f"{lines} lines on stderr, not 1")
    if any(b < 0x20 for b in err[:-1]):
        bad.append("raw control byte on stderr")
    if not LINE.fullmatch(line):
        bad.append("stderr is not `mft: error: KEY = VALUE: why`")
    for want in case.expect:
        alts = want if isinstance(want, tuple) else (want,)
        if not any(a in line for a in alts):
            bad.append("stderr does not name " + " or ".join(repr(a) for a in alts))
    left = []
    for d, dirs, files in os.walk(case_dir):
        left += [os.path.relpath(os.path.join(d, n), case_dir) for n in dirs + files]
    if any(os.path.basename(n).startswith("TS-data") for n in left):
        bad.append("TS-data folder left behind")
    if left:
        bad.append("left behind: " + ", ".join(sorted(left)[:8]))
    after = snapshot(fx)
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            what = "created" if path not in before else "removed" if path not in after else "changed"
            bad.append(f"fixture {os.path.relpath(path, fx)} {what}")
    if special_kinds(sp) != kinds:
        bad.append(f"special files changed: {special_kinds(sp)} (were {kinds})")
    if bad:
        tail = lambda b: b.decode("utf-8", "backslashreplace")[-1500:].rstrip()
        bad.append(f"stdout tail:\n{tail(out)}\n  stderr tail:\n{tail(err)}")
    return bad, line


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="run only the cases whose name matches this regular expression")
    ap.add_argument("-j", type=int, default=2, help="cases run at once (each mostly waits on mpirun)")
    opts = ap.parse_args()
    for k, v in ENV_DEFAULTS.items():
        os.environ.setdefault(k, v)
    os.environ.setdefault("MFT", os.path.join(HERE, "..", "..", "build", "apps", "mft"))
    os.environ.setdefault("MPIEXEC", shutil.which("mpiexec") or "mpiexec")
    if os.geteuid() != 0:
        print("note: not root: the character-device case is skipped (mknod needs root)")

    work = tempfile.mkdtemp(prefix="mft-bad-inputs-")
    results = []
    lock = threading.Lock()
    try:
        fx, sp = os.path.join(work, "fixtures"), os.path.join(work, "special")
        os.mkdir(fx)
        os.mkdir(sp)
        bad_input_fixtures.make_fixtures(fx, mpirun, RUN)
        bad_input_fixtures.make_special_files(sp)
        kinds = special_kinds(sp)
        pristine = os.path.join(work, "pristine")  # to undo a case that damages a fixture
        shutil.copytree(fx, pristine, symlinks=True)
        before = snapshot(fx)
        runs = [(case, ranks) for case in make_cases(fx, sp) if re.search(opts.k, case.name) for ranks in case.ranks]

        def run(n, case, ranks):
            case_dir = os.path.join(work, f"case{n:03d}")
            os.mkdir(case_dir)
            bad, line = check(case, ranks, case_dir, fx, before, sp, kinds)
            with lock:
                if bad:
                    print(f"FAIL: {case.name}: " + "\n  ".join(bad), flush=True)
                    shutil.rmtree(fx)
                    shutil.copytree(pristine, fx, symlinks=True)
                else:
                    print(f"ok: {case.name} -> {line}", flush=True)
                results.append(not bad)
            shutil.rmtree(case_dir, ignore_errors=True)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(opts.j, 1)) as pool:
            for future in [pool.submit(run, n, case, ranks) for n, (case, ranks) in enumerate(runs, 1)]:
                future.result()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    passed, failed = results.count(True), results.count(False)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
