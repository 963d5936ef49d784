"""Bad input at the edges of keys, files and messages: the log as an output
(never a FIFO, a device, an input of the run or a name the system refuses,
in the dry run as in the real one), keys that nothing would read, INI files
that are not what they seem (an empty section, a file that is not text),
numbers at the ends of their types, a value that starts with '-', and an
options file PETSc cannot parse. Each row: exit 2, one line naming the key,
nothing written. bad_inputs.py runs these rows with its own.
"""
import os


def make_files(fx):
    """The INI files of the table, in the fixture folder fx."""
    texts = {"emptysection.ini": b"[model]\nheads = 4\n[bogus]\n[train]\nsteps = 2\n",
             "lastsection.ini": b"[model]\nheads = 4\n[train]\n",
             "garbage.opts": b"root:x:0:0:root:/root:/bin/bash\n" * 3}
    for name, text in texts.items():
        with open(os.path.join(fx, name), "wb") as f:
            f.write(text)


def cases(fx, sp, Case):
    p = lambda n: os.path.join(fx, n)
    s = lambda n: os.path.join(sp, n)
    fwd = lambda *a: ["forward", *a]
    train = lambda *a: ["train", "--train.steps", "2", *a]
    rows = [
        # The log obeys the rules of an output, and is checked in the dry run.
        Case("log is a FIFO", train("--output.log", s("fifo")), ("output.log", "FIFO")),
        Case("log is a FIFO, dry run", train("--output.log", s("fifo"), "--dry-run"), ("output.log", "FIFO")),
        Case("log is the INI file", train("--config", p("ok.ini"), "--output.log", p("ok.ini")),
             ("output.log", "--config")),
        Case("log is the data file", train("--data.task", "file", "--data.file", p("data.h5"),
                                           "--output.log", p("data.h5")), ("output.log", "data.file")),
        Case("log is init.file", train("--model.heads", "5", "--model.slices", "3", "--init.file", p("good.h5"),
                                       "--output.log", p("good.h5")), ("output.log", "init.file")),
        Case("log is the output", train("--output.log", "run.h5", "--output.file", "run.h5"),
             ("output.log", "output.file")),
        Case("log name too long", train("--output.log", "x" * 5000, "--dry-run"),
             ("output.log", "cannot use this name")),
        Case("log in a missing folder", train("--output.log", p("nosuch/run.log")), ("output.log", "does not exist")),
        # Keys that nothing in this run would read.
        Case("data.file without the file task", fwd("--data.file", p("data.h5")),
             ("data.file", "read only by data.task file")),
        Case("weights with a coordinate readout", fwd("--readout.kind", "query", "--readout.weights",
                                                      "1,1,1,1,1,1,1,1"),
             ("readout.weights", "read only by", "readout.kind = query")),
        Case("INI section without keys", fwd("--config", p("emptysection.ini")), ("--config", "[bogus] has no keys")),
        Case("INI last section without keys", fwd("--config", p("lastsection.ini")),
             ("--config", "[train] has no keys")),
        Case("INI of the environment", fwd("--config", "/proc/self/environ"), ("--config", "NUL byte", "not an INI")),
        # Numbers at the ends of their types, and values that look like options.
        Case("integer out of range", fwd("--model.heads", "9223372036854775808"), ("model.heads", "out of range")),
        Case("real rounds to zero", fwd("--init.sigma_v", "1e-400"), ("init.sigma_v", "smallest double")),
        Case("real beyond the largest", fwd("--init.sigma_v", "1e400"), ("init.sigma_v", "largest double")),
        Case("value starting with a dash", fwd("--output.file", "-x.h5"), ("output.file", "--output.file=VALUE")),
        # PETSc's options file: its parse errors in mft's words, quoted briefly.
        Case("-options_file not PETSc's", fwd("-options_file", p("garbage.opts")),
             ("-options_file", "PETSc cannot read it")),
    ]
    return rows
