"""The input checks of mft's readers: what a path is before anything opens
it (a regular file, or a folder, a FIFO, a device: `not_regular`), and the
objects and attributes of an HDF5 run file, each failure a RunFileError of
one line naming the object (a link that does not resolve, a soft-link loop,
a group where a dataset belongs, an attribute that is not UTF-8 text).

h5py is imported only by the functions that read HDF5 files: mft.sweep's
table commands use `file_kind` and `not_regular` without it.
"""
import os
import stat

# What h5py raises for an object or attribute it cannot open or read: a
# broken soft or external link (KeyError), a soft-link loop (RuntimeError),
# a damaged or truncated file (OSError), a type it cannot convert
# (TypeError, ValueError), undecodable text (UnicodeDecodeError).
H5_ERRORS = (KeyError, RuntimeError, OSError, TypeError, ValueError, UnicodeDecodeError)


class RunFileError(Exception):
    """A file that is missing, not a regular file, not HDF5, not an mft/1
    run, or damaged (row counts that contradict its datasets, a dataset HDF5
    cannot read, a link that does not resolve, an attribute that is not
    text)."""


def one_line(text):
    """The first line of an error text (HDF5's messages span several); of
    a KeyError its message, without the quotes str() adds."""
    if isinstance(text, KeyError) and text.args:
        text = text.args[0]
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def file_kind(mode):
    """What a file that is not a regular file is, in words."""
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "an unknown kind of file"


def not_regular(path):
    """None when `path` is a regular file, else why not in words ('no such
    file', 'a FIFO, not a regular file', ...). Only stat looks: a FIFO is
    never opened (that would wait for a writer), nor a device."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "no such file"
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        return f"cannot look at it ({getattr(e, 'strerror', None) or e})"
    return None if stat.S_ISREG(mode) else f"{file_kind(mode)}, not a regular file"


class OutputError(RunFileError):
    """A file a tool may not write (`cannot_write`); a RunFileError, so that
    every tool's boundary (mft.io.exit_on_run_file_error) prints it as its
    one line."""


def cannot_write(path, inputs=()):
    """Why a tool may not write `path`, found by stat before any work, or
    None (a regular file that is none of the inputs is replaced). Never an
    input: the same file as one of `inputs` by device and inode, whatever
    name, symbolic or hard link leads to it; never a symbolic link to
    nothing (writing would create its target somewhere else); never a
    folder, FIFO, socket or device (a write to a FIFO waits for a reader);
    never in a missing folder."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
        folder = os.path.dirname(path) or "."
        return None if os.path.isdir(folder) else f"no folder {folder} to write it in"
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        return f"cannot look at it ({getattr(e, 'strerror', None) or e})"
    if not stat.S_ISREG(st.st_mode):
        return f"{file_kind(st.st_mode)}, not a regular file"
    for given in inputs:
        try:
            other = os.stat(given)
        except (OSError, ValueError, TypeError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            how = " (through a symbolic link)" if os.path.islink(path) or os.path.islink(given) else ""
            return f"that is the input {given}{how}: a tool never writes over what it reads"
    return None


def check_output(path, inputs=(), option="-o", figure=False):
    """`path`, or OutputError of one line `OPTION PATH: why` when a tool may
    not write it (cannot_write); with `figure`, also when its suffix names a
    format matplotlib does not write."""
    why = cannot_write(path, inputs)
    if why is None and figure:
        suffix = os.path.splitext(path)[1][1:].lower()
        from matplotlib.backend_bases import FigureCanvasBase
        formats = FigureCanvasBase.get_supported_filetypes()
        if suffix and suffix not in formats:
            why = f"not a figure format matplotlib writes (.{suffix}; it writes {', '.join(sorted(formats))})"
    if why:
        raise OutputError(f"{option} {path}: {why}")
    return path


def figure_output(given, default, inputs):
    """The figure a tool writes: `given` (its -o) or else `default` (a name
    beside its input), checked as check_output checks a figure."""
    return check_output(given or default, inputs, "-o" if given else "the figure", figure=True)


def save_figure(fig, path, option="-o", **kwargs):
    """fig.savefig(path), a failure (a folder that refuses the file, a full
    disk) an OutputError of one line."""
    try:
        fig.savefig(path, **kwargs)
    except (OSError, ValueError) as e:
        raise OutputError(f"{option} {path}: cannot write it ({one_line(getattr(e, 'strerror', None) or e)})") \
            from None


def _link(f, name):
    """The link /`name` in words, for a message: 'an external link to
    FILE:/OBJECT', 'a soft link to /OBJECT', or ''."""
    import h5py

    try:
        link = f.get(name, getlink=True)
    except H5_ERRORS:
        return ""
    if isinstance(link, h5py.ExternalLink):
        return f"an external link to {link.filename}:{link.path}, "
    if isinstance(link, h5py.SoftLink):
        return f"a soft link to {link.path}, "
    return ""


def has(f, path, name):
    """Whether the file `f` (at `path`) has a link /`name`; RunFileError
    when looking fails (a soft-link loop on the way)."""
    try:
        return name in f
    except H5_ERRORS as e:
        raise RunFileError(f"{path}: /{name} cannot be looked up ({one_line(e)})") from None


def h5object(f, path, name, kind=None):
    """The object /`name` of the file `f` (at `path`), which must be a
    group (kind "group") or a dataset ("dataset") when `kind` says so.
    RunFileError, naming it, when it cannot be opened (a link that does not
    resolve, a loop) or is of the other kind."""
    import h5py

    try:
        obj = f[name]
    except H5_ERRORS as e:
        raise RunFileError(f"{path}: /{name} cannot be opened ({_link(f, name)}{one_line(e)})") from None
    kinds = {"group": h5py.Group, "dataset": h5py.Dataset}
    if kind is not None and not isinstance(obj, kinds[kind]):
        found = next((k for k, cls in kinds.items() if isinstance(obj, cls)), "another kind of object")
        raise RunFileError(f"{path}: damaged run file: /{name} is a {found}, not a {kind}")
    return obj


def members(f, path, group):
    """{name: object} of the members of group /`group`, each opened with
    `h5object` (a member that cannot be opened is damage, not skipped)."""
    g = h5object(f, path, group, "group")
    try:
        names = list(g)
    except H5_ERRORS as e:
        raise RunFileError(f"{path}: the members of /{group} cannot be listed ({one_line(e)})") from None
    return {name: h5object(f, path, f"{group}/{name}") for name in names}


def attribute(f, path, name, key, default=None):
    """Attribute `key` of object /`name` ('' for the root group), text as
    str, `default` when it has none. RunFileError, naming it, when it cannot
    be read or holds bytes that are not UTF-8 (fixed-length or variable-length
    text alike)."""
    return _attribute(h5object(f, path, name) if name else f, path, name, key, default)


def attributes(f, path, name):
    """Every attribute of /`name` as {key: value} (see `attribute`)."""
    obj = h5object(f, path, name)
    try:
        keys = list(obj.attrs)
    except H5_ERRORS as e:
        raise RunFileError(f"{path}: the attributes of /{name} cannot be listed ({one_line(e)})") from None
    return {key: _attribute(obj, path, name, key) for key in keys}


def _attribute(obj, path, name, key, default=None):
    """Attribute `key` of the open object `obj` (/`name`), as `attribute`."""
    where = f"/{name}.{key}" if name else f"the root attribute {key}"
    try:
        if key not in obj.attrs:
            return default
        value = obj.attrs[key]
        if isinstance(value, str):  # h5py keeps bytes that are not UTF-8 as surrogates: back to them
            value = value.encode("utf-8", "surrogateescape")
        return value.decode() if isinstance(value, bytes) else value
    except UnicodeDecodeError as e:
        raise RunFileError(f"{path}: {where} is not UTF-8 text (byte {e.start}: {e.object[e.start:e.start + 1]!r})") \
            from None
    except H5_ERRORS as e:
        raise RunFileError(f"{path}: {where} cannot be read ({one_line(e)})") from None
