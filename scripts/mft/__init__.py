"""Analysis of mft's HDF5 run files (schema mft/1, see docs/FORMAT.md).

Modules: `mft.io` reads run files (`open_run`, `Run`, `RunFileError`)
and many at once (`open_runs`: one xarray.Dataset, the keys that differ
between the runs as its dimensions, from `mft.runs`); `mft.outputs` gives
the results of `mft forward` and `mft ntk` as labelled arrays;
`mft.history`, `mft.particles_plot`, `mft.compare`, `mft.sweep`,
`mft.ntk_table` and `mft.tokens` hold the command-line tools (each a
`main(argv=None)`; `mft.tokens` also the token geometry along depth);
`mft.reference` is an independent NumPy model of mft's equations.

The names of `mft.io` are also reachable here (`mft.open_run(path)`,
`mft.open_runs(pattern)`); they are imported on first use, so `import mft`
alone loads neither h5py nor numpy; so are the modules (`mft.io.Run`
works after `import mft` alone).
"""

# The release, the same as the C++ program's (CMakeLists.txt's project
# VERSION; a test compares them).
__version__ = "0.1.0"

__all__ = ["FORMAT", "Run", "RunFileError", "open_run", "open_runs"]


# The package's modules, each imported on first use as an attribute
# (`import mft; help(mft.io.Run)`), as a plain `import mft.io` would.
MODULES = ("attention_plot", "compare", "h5checks", "history", "io", "ntk_table", "outputs", "particles_plot",
           "reference", "runs", "scaling", "sweep", "sweep_check", "sweep_collect", "sweep_grid", "sweep_plot",
           "sweep_run", "sweep_table", "tokens", "tool_python", "usage")


def __getattr__(name):
    if name in __all__:
        from . import io
        return getattr(io, name)
    if name in MODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(MODULES))
