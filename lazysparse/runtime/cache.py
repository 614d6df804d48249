"""Compiled-kernel cache: C source string -> callable ``ls_kernel``, in memory and on disk.

Every generated source defines ``int32_t ls_kernel(void **p, int64_t *d)``. :func:`load_kernel`
turns such a source into a :class:`Kernel` whose ``fn`` is the cffi function (ABI mode: the
source is compiled by the system C compiler into a shared object, then ``ffi.dlopen``-ed).

Key
    sha256 over the source text, the compiler identity (resolved path + ``--version`` line), the
    flags, the lazysparse version, the machine (``platform.machine()`` + CPU model/flags hash,
    because builds use ``-march=native``) and the cache format. Never shapes or values: those
    are not in the source.

Memory
    ``key -> Kernel``, plus a ``source -> Kernel`` fast path so that a hit costs one dict
    lookup. Thread-safe; concurrent requests for the same new key compile it exactly once (the
    first requester builds, the others wait on an Event and count as hits). Loaded libraries
    are never dlclose-d in a process (code may still be running or referenced through ``fn``).

Disk
    ``$LAZYSPARSE_CACHE_DIR`` or ``$XDG_CACHE_HOME/lazysparse`` or ``~/.cache/lazysparse``, with a
    ``v<version>`` subfolder created 0700. An entry is ``<key>.json`` (metadata: the name, size
    and sha256 of the shared object, the source's sha256, ...) pointing at ``<key>.so`` (or
    ``<key>-<token>.so`` when the entry had to be rebuilt or that path was already dlopen-ed by
    this process: dlopen of a path it already opened would return the old handle), plus the
    saved source ``<key>.c``. All files are written to a unique temp name in the same directory
    and ``os.replace``-d into place, the .so before the metadata, so another process never sees
    a half-written entry. Entries are verified (owner, not group/other writable, size, sha256)
    before dlopen; a corrupt, truncated or insecure entry is rebuilt, never loaded. Builds of one
    key are serialised across processes with ``fcntl.flock`` on ``<key>.lock`` (duplicate work
    avoided; correctness comes from the atomic renames). If the directory is unusable a private
    ``tempfile.mkdtemp`` directory is used instead, with a warning.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat as _st
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import cffi

from . import compiler as _compiler
from .compiler import CompileError, CompilerNotFoundError, compiler_info, openmp_available

try:  # POSIX only; without it concurrent processes may compile the same kernel twice (still safe)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

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
_opened: dict[str, Any] = {}          # path -> cffi Lib, never closed during the process
_stats: dict[str, float] = dict.fromkeys(_COUNTERS, 0)
_dir: str | None = None
_dir_fallback = False


def _reset_for_tests(compiler: bool = True) -> None:
    """Forget everything except already-loaded libraries: memory cache, counters, the resolved
    cache directory (re-read from the environment on next use) and, by default, the compiler."""
    from . import execute as _ex
    _ex.STATS["plan_hits"] = 0
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
    from .. import __version__  # lazily: lazysparse/__init__ imports this module
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


def _secure(st) -> bool:
    """Owned by us and not writable by group or others."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return not (st.st_mode & 0o022)


def _check_dir(path: str) -> str | None:
    """Create ``path`` (0700) if needed; return None if usable, else the reason it is not."""
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
    if not os.access(path, os.W_OK | os.X_OK):
        return "it is not writable"
    return None


def _use_fallback(reason: str) -> str:
    global _dir, _dir_fallback
    tmp = tempfile.mkdtemp(prefix="lazysparse-cache-")  # 0700
    warnings.warn(f"lazysparse: cannot use the kernel cache directory {reason}; compiled "
                  f"kernels go to the private temporary directory {tmp} instead (set "
                  f"LAZYSPARSE_CACHE_DIR to a writable directory to keep them)",
                  RuntimeWarning, stacklevel=4)
    _dir, _dir_fallback = tmp, True
    return tmp


def _disk_dir() -> str:
    """The directory entries live in, resolved (and created) once."""
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


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

def _tmp_name(final: str) -> str:
    return f"{final}.{os.getpid()}.{threading.get_ident()}.{os.urandom(6).hex()}.tmp"


def _atomic_write(final: str, data: bytes, mode: int = 0o600) -> None:
    tmp = _tmp_name(final)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, final)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _read_checked(path: str, max_size: int) -> bytes | None:
    """Contents of a regular file we own that nobody else can write; None otherwise/absent."""
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not _st.S_ISREG(st.st_mode) or not _secure(st):
            raise PermissionError(path)
        if st.st_size > max_size:
            raise ValueError(path)
        chunks, n = [], 0
        while True:
            b = os.read(fd, max(st.st_size - n, 0) + 1)
            if not b:
                break
            chunks.append(b)
            n += len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


@contextmanager
def _file_lock(d: str, key: str):
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(os.path.join(d, key + ".lock"), os.O_RDWR | os.O_CREAT | _O_NOFOLLOW, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the flock


# Kernel libraries stay mapped until the process ends, OpenMP runtime included. cffi closes
# its libraries when they are collected at interpreter exit; the last dlclose of a kernel then
# unmapped libgomp while its worker threads were still spinning in it (OMP_WAIT_POLICY=active,
# or any exit within the spin period of a parallel kernel): a segmentation fault at exit.
DLOPEN_FLAGS = ffi.RTLD_NOW | getattr(ffi, "RTLD_NODELETE", 0)


def _dlopen(path: str):
    with _lock:
        lib = _opened.get(path)
        if lib is None:
            lib = ffi.dlopen(path, DLOPEN_FLAGS)
            lib.ls_kernel  # noqa: B018 -- fail now, not at call time, if the symbol is missing
            _opened[path] = lib
        return lib


# ---------------------------------------------------------------------------------------------
# Keys, loading, building
# ---------------------------------------------------------------------------------------------

def _key(source: str, info) -> str:
    h = hashlib.sha256()
    for part in ("lazysparse-kernel", CACHE_FORMAT, _version(), info.identity,
                 " ".join(info.flags), " ".join(info.link_flags), _compiler.machine_id()):
        h.update(part.encode())
        h.update(b"\0")
    h.update(source.encode())
    return h.hexdigest()


def kernel_key(source: str) -> str:
    """The cache key ``load_kernel(source)`` would use (detects the compiler if needed)."""
    return _key(source, compiler_info(_probe_dir()))


def _try_disk(d: str, key: str, source_sha: str):
    """Look for a verified entry: (Kernel or None, problem, bad .so name).

    ``problem`` is None (absent or fine), "rebuilt" (corrupt, truncated, stale) or "rejected"
    (ownership or permissions); ``bad .so name`` is a file to delete once replaced.
    """
    meta_path = os.path.join(d, key + ".json")
    try:
        raw = _read_checked(meta_path, 1 << 16)
    except FileNotFoundError:
        return None, None, None
    except (PermissionError, ValueError):
        return None, "rejected", None
    except OSError:  # e.g. ELOOP: a symlink planted in our place
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
        blob = _read_checked(so_path, size)
    except FileNotFoundError:
        return None, "rebuilt", None
    except PermissionError:
        return None, "rejected", so_name
    except (ValueError, OSError):
        return None, "rebuilt", so_name
    if len(blob) != size or hashlib.sha256(blob).hexdigest() != digest:
        return None, "rebuilt", so_name
    try:
        lib = _dlopen(so_path)
    except (OSError, AttributeError):
        return None, "rebuilt", so_name
    return Kernel(fn=lib.ls_kernel, key=key, path=so_path, source="", lib=lib,
                  from_disk=True), None, None


def _bump(name: str, by: float = 1) -> None:
    with _lock:
        _stats[name] += by


def _build(d: str, key: str, source: str, source_sha: str, info, bad_so: str | None) -> Kernel:
    src_path = os.path.join(d, key + ".c")
    _atomic_write(src_path, source.encode())
    so_name = key + ".so"
    so_final = os.path.join(d, so_name)
    with _lock:
        reuse_unsafe = so_final in _opened
    if reuse_unsafe or os.path.lexists(so_final):
        so_name = f"{key}-{os.urandom(6).hex()}.so"
        so_final = os.path.join(d, so_name)
    tmp = _tmp_name(so_final)
    try:
        seconds = _compiler.compile_shared(info, src_path, tmp)
        os.chmod(tmp, 0o700)
        with open(tmp, "rb") as f:
            blob = f.read()
        os.replace(tmp, so_final)
    except CompileError:
        _unlink(tmp)
        _bump("compile_errors")
        raise
    except BaseException:
        _unlink(tmp)
        raise
    meta = {
        "key": key, "so": so_name, "so_size": len(blob),
        "so_sha256": hashlib.sha256(blob).hexdigest(), "source_sha256": source_sha,
        "lazysparse": _version(), "compiler": info.argv0, "compiler_version": info.version,
        "flags": list(info.flags), "machine": _compiler.machine_id(),
        "compile_seconds": round(seconds, 6), "created": time.time(),
    }
    _atomic_write(os.path.join(d, key + ".json"), json.dumps(meta, indent=1).encode())
    with _lock:
        _stats["compiles"] += 1
        _stats["compile_seconds"] += seconds
    if bad_so and bad_so != so_name:
        _unlink(os.path.join(d, bad_so))
    lib = _dlopen(so_final)
    return Kernel(fn=lib.ls_kernel, key=key, path=so_final, source=source, lib=lib,
                  compile_seconds=seconds)


def _load_or_build(key: str, source: str, info) -> Kernel:
    source_sha = hashlib.sha256(source.encode()).hexdigest()
    for attempt in (0, 1):
        d = _disk_dir()
        t0 = time.perf_counter()
        k, _, bad = _try_disk(d, key, source_sha)
        if k is None:
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

    Raises :class:`CompilerNotFoundError` when there is no C compiler and :class:`CompileError`
    (a ``RuntimeError`` carrying the compiler's stderr and the saved source's path) when the
    source does not compile.
    """
    k = _by_source.get(source)
    if k is not None:
        with _lock:
            _stats["hits"] += 1
        return k
    if not isinstance(source, str):
        raise TypeError(f"load_kernel expects the C source as str, got {type(source).__name__}")
    info = compiler_info(_probe_dir())
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
        k = _load_or_build(key, source, info)
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
    # warm calls are answered by the planner's signature cache before reaching this one
    from . import execute as _ex
    out["plan_hits"] = _ex.STATS["plan_hits"]
    out["hits"] += _ex.STATS["plan_hits"]
    out["plans"] = len(_ex._RUNNERS)
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
    from . import execute as _ex
    _ex.plan_cache_clear()
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
