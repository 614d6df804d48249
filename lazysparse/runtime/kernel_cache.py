"""Compiled-kernel cache: C source string -> callable ``ls_kernel``, in memory and on disk. Every
generated source defines ``int32_t ls_kernel(void **p, int64_t *d)``; :func:`load_kernel` turns
such a source into a :class:`Kernel` whose ``fn`` is the cffi function (ABI mode: the source is
compiled by the system C compiler into a shared object, then ``ffi.dlopen``-ed). The disk cache is
a trust boundary: a folder is used only when nobody else can change it, and an entry is loaded
only from the bytes that were verified (``_check_dir``, ``_try_disk``)."""
from __future__ import annotations

import atexit
import errno
import hashlib
import json
import os
import shutil
import stat as _st
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import cffi

from lazysparse._version import __version__
from lazysparse.runtime import toolchain as _compiler
from lazysparse.runtime import pch
from lazysparse.runtime.toolchain import CompileError, CompilerNotFoundError, compiler_info, open_private, read_fd, read_private, secure as _secure

try:  # POSIX only; without it concurrent processes may compile the same kernel twice (still safe)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None
# (the loader's descriptor duplication needs it even where a test turns the flock off)
_FCNTL = fcntl

__all__ = [
    "ffi", "libc", "Kernel", "load_kernel", "kernel_key", "cache_info", "clear_cache",
    "CompilerNotFoundError", "CompileError", "openmp_available",
]

CDEF = "int32_t ls_kernel(void **p, int64_t *d); void free(void *); void *malloc(size_t);"
ffi = cffi.FFI()
ffi.cdef(CDEF)
libc = ffi.dlopen(None)

#: Bumped whenever the on-disk layout or the key recipe changes.
CACHE_FORMAT = "1"

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(eq=False)
class Kernel:
    """A loaded kernel. ``fn(p, d)`` takes a ``void*[]`` and an ``int64_t[]`` cdata."""

    fn: Any                  # cffi function ls_kernel
    key: str                 # hex sha256
    path: str                # the shared object it was loaded from
    source: str
    lib: Any = field(repr=False, default=None)   # keeps the dlopen-ed library alive
    compile_seconds: float = 0.0                 # 0.0 when it came from disk
    from_disk: bool = False


class _Pending:
    __slots__ = ("event", "kernel", "error")

    def __init__(self):
        self.event = threading.Event()
        self.kernel = None
        self.error = None


_COUNTERS = ("hits", "misses", "compiles", "disk_hits", "compile_errors", "rebuilt", "rejected",
             "compile_seconds", "disk_load_seconds")

_lock = threading.RLock()
_mem: dict[str, Kernel] = {}
_by_source: dict[str, Kernel] = {}
_inflight: dict[str, _Pending] = {}
# path -> the cffi Lib last loaded from it, never closed during the process. A new build never
# takes a path loaded before (a fresh <key>-<token>.so instead): counting.py dlopen-s
# ``kernel.path`` again, and glibc answers that with the library already loaded from the same
# inode, so one path must not stand for two contents in one process.
_opened: dict[str, Any] = {}
_stats: dict[str, float] = dict.fromkeys(_COUNTERS, 0)
_dir: str | None = None
_dir_fallback = False


# The compiler's caches of bound plans sit above this one: warm calls are answered there before
# reaching a kernel. They register here (``register_plan_cache``) so that ``cache_info`` reports
# them and ``clear_cache`` drops them, without this layer importing the compiler.
_plan_caches: list = []


def register_plan_cache(info, clear, reset) -> None:
    """``info()`` -> (hits, entries); ``clear()`` drops the plans; ``reset()`` zeroes the hits."""
    _plan_caches.append((info, clear, reset))


def _reset_for_tests(compiler: bool = True) -> None:
    """Forget everything except already-loaded libraries: memory cache, counters, the resolved
    cache directory (re-read from the environment on next use) and, by default, the compiler."""
    for _, _, reset in _plan_caches:
        reset()
    global _dir, _dir_fallback
    with _lock:
        _mem.clear()
        _by_source.clear()
        _inflight.clear()
        _stats.update(dict.fromkeys(_COUNTERS, 0))
        _dir = None
        _dir_fallback = False
    if compiler:
        _compiler._reset_for_tests()


# ---------------------------------------------------------------------------------------------
# Directory
# ---------------------------------------------------------------------------------------------

def _version() -> str:
    return __version__


def _cache_root() -> str:
    env = os.environ.get("LAZYSPARSE_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lazysparse")


def _default_dir() -> str:
    return os.path.join(_cache_root(), "v" + _version())


def _unsafe_ancestor(path: str) -> str | None:
    """Why a directory on the way to ``path`` (``path`` included) would let another user
    replace what lies below it, or None.

    The rule ssh applies to ~/.ssh: each directory must be owned by root or the current user
    and not writable by group or others, unless it has the sticky bit (/tmp: others may add
    entries there but not rename or delete ours). Both the path as written and the path with
    its symlinks resolved are checked: a symlink's own directory decides whether it can be
    replaced (a symlink's mode means nothing; its owner must be root or us too), and the
    directories it leads to decide the rest. Everything above the cache is checked once per
    process, when the folder is first used.
    """
    if not hasattr(os, "getuid"):  # pragma: no cover - no POSIX ownership to check
        return None
    uid = os.getuid()
    seen = set()
    for full in (os.path.abspath(path), os.path.realpath(path)):
        p = os.sep
        for part in [""] + [x for x in full.split(os.sep) if x]:
            p = os.path.join(p, part)
            if p in seen:
                continue
            seen.add(p)
            try:
                st = os.lstat(p)
            except OSError as e:
                return f"{p} cannot be inspected ({e.strerror or e})"
            if st.st_uid not in (0, uid):
                return (f"{p} belongs to uid {st.st_uid}, which is neither root nor the "
                        f"current user (uid {uid})")
            if _st.S_ISLNK(st.st_mode):
                continue
            if not _st.S_ISDIR(st.st_mode):
                return f"{p} is not a directory"
            if st.st_mode & 0o022 and not st.st_mode & _st.S_ISVTX:
                who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002))
                                   if st.st_mode & bit)
                return (f"{p} is writable by {who} without the sticky bit (mode "
                        f"{_st.S_IMODE(st.st_mode):04o}), so another user could replace what "
                        "lies below it")
    return None


def _check_dir(path: str) -> str | None:
    """Create ``path`` (0700) if needed; return None if usable, else the reason it is not.

    The folder is used only when every directory above it is owned by root or the current user and
    is writable by nobody else unless sticky (as ssh requires of ~/.ssh), and the folder itself is
    the user's and 0700: otherwise another user could rename it away and put files of theirs in its
    place between two steps. Then a private ``tempfile.mkdtemp`` folder is used instead (deleted at
    exit), with a warning naming the directory and what is wrong with it.
    """
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
            os.chmod(path, 0o700)  # mkdir's mode is filtered through the umask
        except FileExistsError:
            pass
        st = os.lstat(path)
    except OSError as e:
        return f"it could not be created ({e.strerror or e})"
    if not _st.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if not _secure(st):
        return "it is not owned by the current user or is writable by group/others"
    why = _unsafe_ancestor(os.path.dirname(path))
    if why is not None:
        return why
    if not os.access(path, os.W_OK | os.X_OK):
        return "it is not writable"
    return None


_doomed: list = []  # (pid, folder): private folders this process deletes when it exits


def _remove_at_exit(path: str) -> None:
    """Delete ``path`` (a private folder of this process) when the interpreter exits. Kernels
    loaded from it stay mapped: on Linux an unlinked file lives on while it is mapped."""
    with _lock:
        if not _doomed:
            atexit.register(_remove_doomed)
        _doomed.append((os.getpid(), path))


def _remove_doomed() -> None:
    for pid, path in _doomed:
        if pid == os.getpid():  # a forked child that exits normally leaves its parent's alone
            shutil.rmtree(path, ignore_errors=True)


def _use_fallback(reason: str) -> str:
    global _dir, _dir_fallback
    tmp = tempfile.mkdtemp(prefix="lazysparse-cache-")  # 0700
    _remove_at_exit(tmp)
    warnings.warn(f"lazysparse: cannot use the kernel cache directory {reason}; compiled "
                  f"kernels go to the private temporary directory {tmp} instead, deleted when "
                  "this process exits (set LAZYSPARSE_CACHE_DIR to a directory of your own, "
                  "with no directory above it writable by other users, to keep them)",
                  RuntimeWarning, stacklevel=4)
    _dir, _dir_fallback = tmp, True
    return tmp


def _disk_dir() -> str:
    """The directory entries live in, resolved (and created) once.

    ``$LAZYSPARSE_CACHE_DIR`` or ``$XDG_CACHE_HOME/lazysparse`` or ``~/.cache/lazysparse``, with a
    ``v<version>`` subfolder created 0700. An entry is ``<key>.json`` (metadata: the name, size and
    sha256 of the shared object, the source's sha256, ...) pointing at ``<key>.so`` (or
    ``<key>-<token>.so`` when the entry had to be rebuilt or that path was already loaded by this
    process), plus a copy of the source, ``<key>.c``, for people to read: nothing is ever compiled
    from it. All files are written to a unique temp name in the same directory and
    ``os.replace``-d into place, the .so before the metadata, so another process never sees a
    half-written entry. Builds of one key are serialised across processes with ``fcntl.flock`` on
    ``<key>.lock`` (duplicate work avoided; correctness comes from the atomic renames).
    """
    global _dir
    d = _dir
    if d is not None:
        return d
    with _lock:
        if _dir is not None:
            return _dir
        path = _default_dir()
        why = _check_dir(path)
        if why is None:
            _dir = path
            return path
        return _use_fallback(f"{path}: {why}")


def _probe_dir() -> str | None:
    try:
        return _disk_dir()
    except OSError:
        return None


def openmp_available() -> bool:
    """True when kernels are compiled with ``-fopenmp`` (so ``#pragma omp`` is honoured).

    Triggers compiler detection (remembered in the cache directory); returns False (rather than
    raising) when there is no compiler.
    """
    try:
        return compiler_info(_probe_dir()).openmp
    except CompilerNotFoundError:
        return False


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

def _tmp_name(final: str) -> str:
    return f"{final}.{os.getpid()}.{threading.get_ident()}.{os.urandom(6).hex()}.tmp"


def _atomic_write(final: str, data: bytes, mode: int = 0o600, keep: bool = False):
    """Write ``data`` to a new temporary name beside ``final``, then rename it into place: a
    reader finds the old file, the new one complete, or none.

    With ``keep`` the file is flushed to disk first (the checksum would catch a torn file after
    a crash, but then the entry is rebuilt; flushed, it survives) and its descriptor is returned,
    open: the library is loaded through it, whatever the name points at by then.
    """
    tmp = _tmp_name(final)
    flags = (os.O_RDWR if keep else os.O_WRONLY) | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW
    fd = os.open(tmp, flags, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.chmod(tmp, mode)  # (os.open's mode went through the umask)
        if keep:
            os.fsync(fd)
        os.replace(tmp, final)
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    if keep:
        return fd
    os.close(fd)
    return None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _read_checked(path: str, max_size: int) -> bytes:
    """Contents of a regular file we own that nobody else can write (see
    ``compiler.open_private``: FileNotFoundError, PermissionError or ValueError otherwise)."""
    return read_private(path, max_size)


@contextmanager
def _file_lock(d: str, key: str):
    if fcntl is None:
        yield
        return
    try:
        # O_NONBLOCK: a FIFO planted here would block the open; a lock file that is not a
        # regular file of ours is not used (the atomic renames keep entries sound without it)
        fd = os.open(os.path.join(d, key + ".lock"),
                     os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError:
        yield
        return
    try:
        st = os.fstat(fd)
        if _st.S_ISREG(st.st_mode) and _secure(st):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the flock


# Kernel libraries stay mapped until the process ends, OpenMP runtime included. cffi closes
# its libraries when they are collected at interpreter exit; the last dlclose of a kernel then
# unmapped libgomp while its worker threads were still spinning in it (OMP_WAIT_POLICY=active,
# or any exit within the spin period of a parallel kernel): a segmentation fault at exit.
DLOPEN_FLAGS = ffi.RTLD_NOW | getattr(ffi, "RTLD_NODELETE", 0)

# dlopen takes a name, and what a path names can change between the hash check and the dlopen.
# So a library is dlopen-ed as /proc/self/fd/N of the descriptor its bytes were read (and
# hashed) from, or written through: the kernel resolves that name to the very inode, whatever
# the path names by then, and only its owner (us) can write an inode of mode 0700. A memfd copy
# of the bytes would be as safe, but another inode: counting.py dlopen-s ``kernel.path`` again
# to reach the kernel's counters, and glibc hands back an already-loaded library for the same
# inode (or the same name), so from a memfd it would map a second copy whose counters no call
# updates. The cost is that of opening by path: a descriptor duplicated, then closed.
# glibc also hands back the library it loaded under a name seen before, and descriptor numbers
# are reused: each load therefore takes a number above the last one (F_DUPFD), and when numbers
# run out another spelling (/proc/self/fd/./N, /proc/self/fd/././N, ...) starts a new series,
# so that no name is dlopen-ed twice.
_PROC_FD = "/proc/self/fd"
_HAVE_PROC_FD = os.path.isdir(_PROC_FD)
_FD_CAP = 4096           # keeps the descriptor table small: then a new series
_fd_series = [0, 0]      # [spelling, lowest number the next load may use], under _lock


def _proc_fd_name(fd: int) -> tuple[str, int]:
    """(a /proc name of ``fd``'s file that no dlopen of this process used, the duplicate
    descriptor it names, to close after the dlopen)."""
    for cap in (_FD_CAP, None):
        spelling, floor = _fd_series
        try:
            dup = _FCNTL.fcntl(fd, _FCNTL.F_DUPFD_CLOEXEC, floor)
        except OSError:  # EINVAL (floor past RLIMIT_NOFILE) or EMFILE
            dup = -1
        if dup >= 0 and (cap is None or dup < cap):
            _fd_series[1] = dup + 1
            return f"{_PROC_FD}/{'./' * spelling}{dup}", dup
        if dup >= 0:
            os.close(dup)
        _fd_series[:] = [spelling + 1, 0]
    raise OSError(errno.EMFILE, "no file descriptor left to load a kernel through")


def _dlopen(path: str, fd: int | None = None):
    """dlopen the library whose verified bytes ``fd`` reads (``path`` is where it came from).

    Without /proc (not Linux) the path itself is opened: there only root and this user can
    change what it names (the directory checks), but a swap by this user's other processes
    in between is not excluded.
    """
    with _lock:
        if fd is None or _FCNTL is None or not _HAVE_PROC_FD:
            lib = ffi.dlopen(path, DLOPEN_FLAGS)
        else:
            name, dup = _proc_fd_name(fd)
            try:
                lib = ffi.dlopen(name, DLOPEN_FLAGS)
            finally:
                os.close(dup)
        lib.ls_kernel  # noqa: B018 -- fail now, not at call time, if the symbol is missing
        _opened[path] = lib
        return lib


# ---------------------------------------------------------------------------------------------
# Keys, loading, building
# ---------------------------------------------------------------------------------------------

def _key(source: str, info) -> str:
    """sha256 over the source text, the compiler identity (resolved path + ``--version`` line), the
    flags, the lazysparse version, the machine (``platform.machine()`` + CPU model/flags hash, because
    builds use ``-march=native``) and the cache format. Never shapes or values: those are not in the
    source.
    """
    h = hashlib.sha256()
    for part in ("lazysparse-kernel", CACHE_FORMAT, _version(), info.identity,
                 " ".join(info.flags), " ".join(info.link_flags), _compiler.machine_id()):
        h.update(part.encode())
        h.update(b"\0")
    h.update(source.encode())
    return h.hexdigest()


def _lookup_compiler():
    """(compiler info, None), or without a compiler (the last compiler that built kernels into
    the cache on this machine, the CompilerNotFoundError to raise when a compile is needed)."""
    d = _probe_dir()
    try:
        return compiler_info(d), None
    except CompilerNotFoundError as e:
        info = _compiler.remembered_compiler(d)
        if info is None:
            raise
        return info, e


def kernel_key(source: str) -> str:
    """The cache key ``load_kernel(source)`` would use (detects the compiler if needed)."""
    return _key(source, _lookup_compiler()[0])


def _try_disk(d: str, key: str, source_sha: str):
    """Look for a verified entry: (Kernel or None, problem, bad .so name).

    ``problem`` is None (absent or fine), "rebuilt" (corrupt, truncated, stale) or "rejected"
    (ownership, permissions, not a regular file); ``bad .so name`` is a file to delete once
    replaced.

    Entries are read only when they are regular files of the current user that nobody else can
    write (a FIFO or a symlink is refused, never opened), and a shared object is loaded through the
    descriptor its bytes were read and hashed from (``_dlopen``), never through a path whose target
    could change after the check. A refused, corrupt or truncated entry is rebuilt, never loaded.
    Entries that vanish in the middle (``clear_cache(disk=True)`` in another process) are looked up
    once more, then built again. A kernel is compiled in a private temporary folder of its own, then
    its bytes are copied into the cache.
    """
    try:
        raw = _read_checked(os.path.join(d, key + ".json"), 1 << 16)
    except FileNotFoundError:
        return None, None, None
    except (OSError, ValueError):  # refused (PermissionError), too large, ELOOP, ...
        return None, "rejected", None
    try:
        meta = json.loads(raw)
        so_name = meta["so"]
        ok = (meta["key"] == key and meta["source_sha256"] == source_sha
              and isinstance(so_name, str) and so_name.startswith(key)
              and so_name.endswith(".so") and os.path.basename(so_name) == so_name)
        size, digest = int(meta["so_size"]), meta["so_sha256"]
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        return None, "rebuilt", None
    so_path = os.path.join(d, so_name)
    try:
        fd, _ = open_private(so_path, size)
    except FileNotFoundError:
        return None, "rebuilt", None
    except PermissionError:
        return None, "rejected", so_name
    except (ValueError, OSError):
        return None, "rebuilt", so_name
    try:
        blob = read_fd(fd, size)
        if len(blob) != size or hashlib.sha256(blob).hexdigest() != digest:
            return None, "rebuilt", so_name
        try:
            lib = _dlopen(so_path, fd)  # the bytes just hashed, whatever so_path names now
        except (OSError, AttributeError):
            return None, "rebuilt", so_name
    finally:
        os.close(fd)
    return Kernel(fn=lib.ls_kernel, key=key, path=so_path, source="", lib=lib,
                  from_disk=True), None, None


def _bump(name: str, by: float = 1) -> None:
    with _lock:
        _stats[name] += by


def _compile_private(work: str, saved: str, key: str, source: str, info) -> tuple[int, float]:
    """Compile ``source`` in the private folder ``work``: (a read descriptor of the shared
    object, seconds). Nobody else can write there (mkdtemp: 0700, ours), so what cc reads is
    our source and what we read back is its output. A CompileError names ``saved``, the copy of
    the source in the cache, rather than the private one, deleted on return."""
    src, out = os.path.join(work, key + ".c"), os.path.join(work, key + ".so")
    fd = os.open(src, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(source.encode())
    try:
        seconds = _compiler.compile_shared(info, src, out, pch.include_args(info, source))
    except CompileError as e:
        _bump("compile_errors")
        raise CompileError(str(e).replace(src, saved)) from None
    # (its mode is the compiler's, umask included: in a folder nobody else can enter it does
    # not matter; the copy in the cache is 0700)
    fd = os.open(out, os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    if not _st.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CompileError(f"lazysparse: compiling a kernel left no regular file at {out}")
    return fd, seconds


def _publish(d: str, key: str, source_sha: str, blob: bytes, info,
             seconds: float) -> tuple[str, int]:
    """Put a built entry into the cache: (the shared object's path, a descriptor of it)."""
    so_name = key + ".so"
    so_final = os.path.join(d, so_name)
    with _lock:
        loaded = so_final in _opened
    if loaded or os.path.lexists(so_final):  # a new name for new contents
        so_name = f"{key}-{os.urandom(6).hex()}.so"
        so_final = os.path.join(d, so_name)
    fd = _atomic_write(so_final, blob, 0o700, keep=True)
    try:
        meta = {
            "key": key, "so": so_name, "so_size": len(blob),
            "so_sha256": hashlib.sha256(blob).hexdigest(), "source_sha256": source_sha,
            "lazysparse": _version(), "compiler": info.argv0,
            "compiler_version": info.version, "flags": list(info.flags),
            "machine": _compiler.machine_id(), "compile_seconds": round(seconds, 6),
            "created": time.time(),
        }
        _atomic_write(os.path.join(d, key + ".json"), json.dumps(meta, indent=1).encode())
    except BaseException:
        os.close(fd)
        raise
    return so_final, fd


def _build(d: str, key: str, source: str, source_sha: str, info, bad_so: str | None) -> Kernel:
    """Compile privately, copy the result into the cache, load it.

    The bytes are copied into the cache (a temporary name, fsync, ``os.replace``) rather than
    renamed: a rename fails across file systems (/tmp is often tmpfs), and the copy is what
    was read and hashed. Should the entry's files vanish while being written (another
    process's ``clear_cache(disk=True)``), writing is tried once more, then the kernel is
    loaded from the private folder, kept until exit.
    """
    # first the copy of the source for people to read (never compiled from): an unusable
    # directory shows before the compile, not after
    saved = os.path.join(d, key + ".c")
    try:
        _atomic_write(saved, source.encode())
    except FileNotFoundError:  # removed as it was written (clear_cache elsewhere): only a copy
        pass
    work = tempfile.mkdtemp(prefix="lazysparse-build-")  # cc's own temporary files go to TMPDIR too
    keep = False
    try:
        out_fd, seconds = _compile_private(work, saved, key, source, info)
        try:
            blob = read_fd(out_fd, 1 << 31)
            with _lock:
                _stats["compiles"] += 1
                _stats["compile_seconds"] += seconds
            _compiler.remember_compiler(d)
            for attempt in (0, 1):
                try:
                    so_path, fd = _publish(d, key, source_sha, blob, info, seconds)
                    break
                except FileNotFoundError:
                    if attempt or _check_dir(d) is not None:
                        so_path, fd, keep = os.path.join(work, key + ".so"), os.dup(out_fd), True
                        break
            try:
                lib = _dlopen(so_path, fd)
            finally:
                os.close(fd)
        finally:
            os.close(out_fd)
    finally:
        if keep:
            _remove_at_exit(work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if bad_so and not keep and bad_so != os.path.basename(so_path):
        _unlink(os.path.join(d, bad_so))
    return Kernel(fn=lib.ls_kernel, key=key, path=so_path, source=source, lib=lib,
                  compile_seconds=seconds)


def _load_or_build(key: str, source: str, info, missing: Exception | None = None) -> Kernel:
    """From disk, or built; ``missing`` (no compiler) is raised only when a build is needed."""
    source_sha = hashlib.sha256(source.encode()).hexdigest()
    for attempt in (0, 1):
        d = _disk_dir()
        t0 = time.perf_counter()
        k, _, bad = _try_disk(d, key, source_sha)
        if k is None:
            if missing is not None:
                raise CompilerNotFoundError(str(missing))
            try:
                with _file_lock(d, key):
                    # another process may have finished the same build while we waited
                    k, problem, bad2 = _try_disk(d, key, source_sha)
                    if k is None:
                        if problem:
                            _bump(problem)
                        return _build(d, key, source, source_sha, info, bad2 or bad)
            except CompileError:
                raise
            except FileNotFoundError:
                if attempt == 0:  # a file vanished between two steps: once more from the start
                    continue
                raise
            except OSError as e:
                if attempt or _dir_fallback:
                    raise
                with _lock:
                    if _dir == d:
                        _use_fallback(f"{d}: using it failed ({e.strerror or e})")
                continue
        with _lock:
            _stats["disk_hits"] += 1
            _stats["disk_load_seconds"] += time.perf_counter() - t0
        k.source = source
        return k
    raise AssertionError("unreachable")


def load_kernel(source: str) -> Kernel:
    """The compiled kernel for this C source, from memory, from disk, or freshly compiled.

    Raises :class:`CompilerNotFoundError` when the kernel has to be compiled and there is no C
    compiler (a kernel already on disk is loaded without one) and :class:`CompileError`
    (a ``RuntimeError`` carrying the compiler's stderr and the saved source's path) when the
    source does not compile.

    In memory: ``key -> Kernel``, plus a ``source -> Kernel`` fast path so that a hit costs one dict
    lookup. Thread-safe; concurrent requests for the same new key compile it exactly once (the first
    requester builds, the others wait on an Event and count as hits). Loaded libraries are never
    dlclose-d in a process (code may still be running or referenced through ``fn``).

    Without a compiler: the compiler's identity is part of the key, so keys are computed with the
    last compiler that built kernels into this folder on this machine (a record kept beside the
    entries, checked like them), and a warm cache still serves its kernels;
    :class:`CompilerNotFoundError` is raised only when a kernel has to be compiled.
    """
    k = _by_source.get(source)
    if k is not None:
        with _lock:
            _stats["hits"] += 1
        return k
    if not isinstance(source, str):
        raise TypeError(f"load_kernel expects the C source as str, got {type(source).__name__}")
    info, missing = _lookup_compiler()
    key = _key(source, info)
    with _lock:
        k = _mem.get(key)
        if k is not None:
            _stats["hits"] += 1
            _by_source[source] = k
            return k
        pending = _inflight.get(key)
        owner = pending is None
        if owner:
            pending = _inflight[key] = _Pending()
            _stats["misses"] += 1
    if not owner:
        pending.event.wait()
        if pending.error is not None:
            raise pending.error
        _bump("hits")
        return pending.kernel
    try:
        k = _load_or_build(key, source, info, missing)
    except BaseException as e:
        pending.error = e
        with _lock:
            _inflight.pop(key, None)
        pending.event.set()
        raise
    with _lock:
        _mem[key] = k
        _by_source[source] = k
        _inflight.pop(key, None)
    pending.kernel = k
    pending.event.set()
    return k


# ---------------------------------------------------------------------------------------------
# Public
# ---------------------------------------------------------------------------------------------

def cache_info() -> dict:
    """Process-wide counters and where the cache lives.

    ``hits`` memory hits (including threads that waited for another thread's build),
    ``misses`` memory misses, ``disk_hits`` misses served from disk, ``compiles`` C compilations,
    ``entries`` kernels in memory, ``disk_dir``, plus ``compile_errors``, ``rebuilt`` (corrupt or
    stale disk entries rebuilt), ``rejected`` (disk entries refused for ownership/permissions),
    ``compile_seconds``, ``disk_load_seconds``, ``fallback_dir`` (True when a temporary directory
    replaced an unusable one), and the compiler when known.
    """
    with _lock:
        out: dict[str, Any] = {k: (int(v) if not k.endswith("seconds") else float(v))
                               for k, v in _stats.items()}
        out["entries"] = len(_mem)
        d, fb = _dir, _dir_fallback
    if d is None:
        try:
            d = _default_dir()
        except Exception:  # pragma: no cover
            d = None
    # warm calls are answered by the compiler's plan caches before reaching this one
    out["plan_hits"] = out["plans"] = 0
    for info, _, _ in _plan_caches:
        hits, entries = info()
        out["plan_hits"] += hits
        out["plans"] += entries
    out["hits"] += out["plan_hits"]
    out["disk_dir"] = d
    out["fallback_dir"] = fb
    info = _compiler._info
    out["compiler"] = " ".join(info.argv0) if info else None
    out["compiler_version"] = info.version if info else None
    out["flags"] = list(info.flags) if info else None
    out["openmp"] = info.openmp if info else None
    return out


def clear_cache(disk: bool = False) -> None:
    """Drop the in-memory kernels; with ``disk=True`` also delete the on-disk entries of this
    version's cache directory. Counters are process-wide totals and are not reset. Libraries
    already loaded stay mapped (a kernel may still be running or referenced)."""
    for _, clear, _ in _plan_caches:
        clear()
    with _lock:
        _mem.clear()
        _by_source.clear()
        d = _dir
    if not disk:
        return
    if d is None:
        d = _default_dir()
    try:
        names = os.listdir(d)
    except OSError:
        return
    for name in names:
        if name.endswith((".so", ".json", ".c", ".lock", ".tmp")):
            _unlink(os.path.join(d, name))
