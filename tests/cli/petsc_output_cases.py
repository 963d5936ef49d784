"""PETSc's options that name files, under mft's output rules: a file PETSc
would write (a viewer's, -history's, -log_trace's F.RANK, -info's F.RANK,
-malloc_view's F_RANK, a binary viewer's F.info) is never a file of the run
(its configuration, run file, output, log, data, init.file, --from file,
options file; by name, by another name or through a link), never a special
file, never in a missing folder. Every option that `mft --petsc-help`
documents as naming a file for the objects mft creates (PETSc 3.18: the
viewer options, and the start-up ones whose help names a filename) is
tried on the configuration; then each kind of option on each role. A run
refused for another reason leaves none of PETSc's files behind. Each row:
exit 2, one line naming the option, nothing written. bad_inputs.py runs
these rows with its own.
"""
import os
import re
import subprocess

INI = b"[model]\nheads = 4\n"
# Options PETSc acts on without documenting them in --petsc-help: each
# writes a file (checked on this PETSc by hand: -history F at the start,
# the others when the integrator is made or has run).
UNDOCUMENTED = ["-history", "-depth_ts_view", "-depth_ts_view_pre", "-depth_ts_trajectory_view",
                "-train_ts_view", "-train_ts_view_pre", "-viewer_binary_filename"]
# Written as F.0 on rank 0 (-log_trace, -info) or F_0 (-malloc_view).
SUFFIXED = {"-log_trace": ("trace", ".0"), "-info": ("info", ".0"), "-malloc_view": ("mview", "_0")}
RANK_1 = "rank.1"  # -log_trace rank writes it on rank 1 alone


def make_files(fx):
    """The fixtures of the table, in the fixture folder fx (which holds
    ok.ini, good.h5, rs.h5, exists.h5 and data.h5 already)."""
    for name in [stem + suffix for stem, suffix in SUFFIXED.values()] + [RANK_1]:
        with open(os.path.join(fx, name), "wb") as f:
            f.write(INI)
    with open(os.path.join(fx, "logself.opts"), "w") as f:
        f.write(f"-log_view :{os.path.join(fx, 'logself.opts')}\n")
    os.symlink("ok.ini", os.path.join(fx, "cfglink"))
    os.symlink("nosuch", os.path.join(fx, "dangling"))


def documented_file_options():
    """(viewer options, start-up options naming a filename) of `mft --petsc-help`."""
    p = subprocess.run([os.environ["MFT"], "--petsc-help"], stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=120)
    text = p.stdout.decode("utf-8", "replace")
    viewers = sorted({line.split()[0] for line in text.splitlines() if "(PetscOptionsGetViewer)" in line})
    named = sorted({line.split()[0].rstrip(":") for line in text.splitlines()
                    if re.search(r"filename", line) and "(PetscOptionsGetViewer)" not in line})
    # A list that shrank would test nothing: PETSc 3.18 documents 92 viewer
    # options for the depth_ and train_ integrators and 6 named files.
    assert len(viewers) >= 80 and "-depth_ts_monitor" in viewers and "-train_ts_monitor" in viewers, \
        f"mft --petsc-help lists {len(viewers)} viewer options (exit {p.returncode})"
    for name in ("-log_view", "-log_trace", "-info", "-malloc_view", "-depth_ts_monitor_solution_vtk"):
        assert name in named, f"mft --petsc-help does not document {name} with a file name: {named}"
    return viewers, named


def value_for(option, path):
    """The value that makes `option` write the file `path`."""
    if option in SUFFIXED:
        return path[: -len(SUFFIXED[option][1])]
    if option in ("-log_view",):
        return ":" + path
    if option.endswith("_vtk") or option in ("-history", "-viewer_binary_filename", "-malloc_dump"):
        return path
    return "ascii:" + path


def cases(fx, sp, Case, run):
    p = lambda n: os.path.join(fx, n)
    s = lambda n: os.path.join(sp, n)
    fwd = lambda *a: ["forward", *a]
    viewers, named = documented_file_options()
    rows = []
    # Every documented file-naming option, on the configuration it would overwrite.
    for option in viewers + named + UNDOCUMENTED:
        config = p(SUFFIXED[option][0] + SUFFIXED[option][1]) if option in SUFFIXED else p("ok.ini")
        extra = ["-depth_ts_view", "binary"] if option == "-viewer_binary_filename" else []
        # -malloc_dump takes no file name in PETSc 3.18.5: refused as not a logical value.
        expect = (option, "--config") if option != "-malloc_dump" else (option, "logical")
        rows.append(Case(f"PETSc documented {option} onto the configuration", fwd("--config", config, *extra, option,
                                                                        value_for(option, config)),
                         expect, (0,)))
    # Each kind of option (opened at the start, when the integrator is made,
    # after it ran, at the end) on each file of a run.
    kinds = [("-history", "{}"), ("-depth_ts_monitor", "ascii:{}"), ("-depth_ts_view", "binary:{}"),
             ("-log_view", ":{}")]
    train = ["train", *run, "--train.steps", "6"]
    roles = [("--restart", train + ["--restart", p("rs.h5")], p("rs.h5")),
             ("output.file", fwd("--output.file", "out.h5"), "out.h5"),
             ("output.file", fwd("--output.file", p("exists.h5"), "--output.overwrite", "true"), p("exists.h5")),
             ("output.log", train + ["--output.file", "t.h5", "--output.log", "t.log"], "t.log"),
             ("data.file", fwd("--data.task", "file", "--data.file", p("data.h5")), p("data.h5")),
             ("init.file", fwd(*run, "--init.file", p("good.h5")), p("good.h5")),
             ("--from", fwd("--from", p("good.h5")), p("good.h5")),
             ("--config", ["train", "--dry-run", "--config", p("ok.ini")], p("ok.ini")),
             ("--config", fwd("--config", p("ok.ini")), p("cfglink"))]
    for key, args, target in roles:
        for option, form in kinds:
            rows.append(Case(f"PETSc {option} onto {key} {os.path.basename(target)}",
                             args + [option, form.format(target)], (option, key), (0, 2)))
    rows += [
        Case("PETSc -log_view onto the default output file", fwd("-log_view", ":mft.h5"),
             ("-log_view", "output.file"), (0, 2)),
        Case("PETSc -log_view onto its own options file", fwd("-options_file", p("logself.opts")),
             ("-log_view", "-options_file")),
        Case("PETSc -log_trace onto the configuration on rank 1 alone",
             fwd("--config", p(RANK_1), "-log_trace", p("rank")), ("-log_trace", "--config", RANK_1)),
        Case("PETSc -log_trace named after the run file", ["train", *run, "--train.steps", "6", "--restart",
                                                             p("rs.h5"), "-log_trace", p("rs.h5")],
             ("-log_trace", "--restart", "beside it"), (0, 2)),
        Case("PETSc -info named after the configuration", fwd("--config", p("ok.ini"), "-info", p("ok.ini") + ":sys"),
             ("-info", "--config", "beside it")),
        Case("PETSc -history onto a FIFO", fwd("-history", s("fifo")), ("-history", "FIFO"), (0, 2)),
        Case("PETSc -log_view onto a FIFO", fwd("-log_view", ":" + s("fifo")), ("-log_view", "FIFO")),
        Case("PETSc viewer through a link to a FIFO", fwd("-depth_ts_monitor", "ascii:" + s("fifo-link")),
             ("-depth_ts_monitor", "FIFO")),
        Case("PETSc viewer in a missing folder", fwd("-depth_ts_view", "binary:" + p("nosuch/v.bin")),
             ("-depth_ts_view", "does not exist")),
        Case("PETSc viewer onto a link to nothing", fwd("-log_view", ":" + p("dangling")),
             ("-log_view", "link to nothing")),
        Case("PETSc -history onto an HDF5 file", fwd("-history", p("exists.h5")), ("-history", "HDF5 file")),
        Case("PETSc --petsc-help with a monitor onto the configuration",
             ["--petsc-help", "--config", p("ok.ini"), "-depth_ts_monitor", "ascii:" + p("ok.ini")],
             ("-depth_ts_monitor", "--config")),
        # Refused for another reason: no log, history, trace or info file stays.
        Case("PETSc's files of a refused run", fwd("--model.heads", "0", "-history", "h.txt", "-log_trace", "tr",
                                                   "-info", "inf", "-log_view", ":lv.txt", "-malloc_view", "mv",
                                                   "-log_all", "-depth_ts_monitor", "ascii:mon.txt"),
             ("model.heads",), (0, 2)),
    ]
    if os.path.exists(s("null")):
        rows.append(Case("PETSc viewer onto a character device", fwd("-depth_ts_monitor", "ascii:" + s("null")),
                         ("-depth_ts_monitor", "character device")))
    return rows
