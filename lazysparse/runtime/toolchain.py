"""Find the system C compiler, probe what it supports, and compile C99 sources to shared objects.
Everything here is computed at most once per process (guarded by a lock) and is cheap to ask for
again: the compiler's resolved path and identity, the flags it accepts, and a CPU identification
used in cache keys (``compiler_info``, ``machine_id``). Records kept on disk are read through
``read_private``, and compilation always goes through :func:`subprocess.run` with a list argv,
never a shell string."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import shutil
import stat as _st
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass

__all__ = [
    "CompilerNotFoundError",
    "CompileError",
    "CompilerInfo",
    "compiler_info",
    "compile_shared",
    "machine_id",
    "remember_compiler",
    "remembered_compiler",
    "read_private",
]

#: Flags every kernel is compiled with (before the probed, optional ones).
#: ``-fwrapv`` makes signed integer overflow wrap, as NumPy integers do.
# -ffp-contract=off: no fused multiply-add. An FMA on a loop-carried accumulator (SpMV's
# acc += a*x) has a longer latency than an add (measured 1.5x slower SpMV with it), and it changes
# rounding away from NumPy/scipy's separate multiply and add.
BASE_FLAGS = ("-O3", "-std=gnu99", "-fPIC", "-shared", "-fwrapv", "-fno-math-errno", "-ffp-contract=off")
#: Appended after the source file (libraries).
LINK_FLAGS = ("-lm",)
# -falign-loops=32, where accepted: an inner loop placed across a 64-byte boundary ran SpMV's
# scalar row loop on cage10 1.33x slower (305 vs 229 us, same source, in-process) than aligned;
# where a loop lands is otherwise up to the layout of everything before it in the kernel.
# Where the rest of the code lands still moves timings: a never-taken branch added to the
# workspace drain made A @ A on ego-Facebook 7% slower. -falign-functions=64 fixed that one but
# made the masked product on adder_dcop_05 1.3x slower (1.44 -> 1.87 ms); -falign-loops=64 and
# -falign-functions=32 won nowhere overall. Kept at loops only.
ALIGN_FLAGS = ("-falign-loops=32",)

# glibc's vector math library (libmvec): SIMD variants of libm's functions, which gcc calls
# from a vectorised loop once a declaration says they exist (the ``simd`` attribute; the
# kernels' prelude declares them when ``LS_MVEC`` is defined, compiler/codegen/c/spelling.py). Without
# them every loop that calls ``exp`` or ``tanh`` runs one scalar call per element: ``exp`` of a
# dense 1000 x 1000 array took 4.3 ms against NumPy's 0.79 (AVX-512 SVML). Its results are
# within 4 ulp of libm's, with libm's special values (NaN, +-inf, signed zeros, overflow and
# underflow: checked for every function below against NumPy), as NumPy's SVML loops are.
# glibc 2.35 exports all of these; an older libmvec (only exp, log, sin, cos, pow) fails the
# probe's link or load and the kernels use scalar calls.
MVEC_UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh", "exp",
              "exp10", "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "sinh", "tan", "tanh")
MVEC_BINARY = ("atan2", "hypot", "pow")
MVEC_FLAGS = ("-DLS_MVEC",)
MVEC_LINK = ("-lmvec", "-lm")


def mvec_declarations() -> str:
    """The declarations that let gcc vectorise calls of libm's functions (double and float),
    for the kernels' prelude: gcc's ``simd`` attribute (OpenMP's ``declare simd``, without
    needing -fopenmp) on each function, named in parentheses so tgmath.h's macro does not
    expand. Two lines, so that ``explain`` stays readable."""
    def names(t, suffix):
        return ", ".join(f"({f}{suffix})({t}, {t})" if f in MVEC_BINARY else f"({f}{suffix})({t})"
                         for f in MVEC_UNARY + MVEC_BINARY)
    return (f'__attribute__((simd("notinbranch"))) extern double {names("double", "")};\n'
            f'__attribute__((simd("notinbranch"))) extern float {names("float", "f")};')


# every function once in a loop gcc vectorises (acosh's argument moved into its domain): the
# link and the load fail where libmvec lacks one of them, as the kernels' would
def _mvec_sum(x, suffix):
    return " + ".join(f"{f}{suffix}({x}, {x})" if f in MVEC_BINARY else
                      f"{f}{suffix}(1 + {x})" if f == "acosh" else f"{f}{suffix}({x})"
                      for f in MVEC_UNARY + MVEC_BINARY)


_MVEC_PROBE_SOURCE = ("#include <stdint.h>\n#include <math.h>\n" + mvec_declarations() + "\n"
                      "int32_t ls_kernel(void **p, int64_t *d) {\n"
                      "  const double *restrict a = (const double *)p[0];\n"
                      "  double *restrict o = (double *)p[1];\n"
                      "  const float *restrict af = (const float *)p[2];\n"
                      "  float *restrict of = (float *)p[3];\n"
                      f"  for (int64_t i = 0; i < d[0]; i++) o[i] = {_mvec_sum('a[i]', '')};\n"
                      f"  for (int64_t i = 0; i < d[0]; i++) of[i] = {_mvec_sum('af[i]', 'f')};\n"
                      "  return 0;\n}\n")

_INSTALL_HELP = (
    "lazysparse needs a C compiler to build its kernels, and none was found "
    "(looked for $CC, then cc, gcc and clang on PATH). Install one:\n"
    "  Debian/Ubuntu:  sudo apt-get install gcc\n"
    "  Fedora/RHEL:    sudo dnf install gcc\n"
    "  macOS:          xcode-select --install\n"
    "  conda:          conda install -c conda-forge c-compiler\n"
    "or point the CC environment variable at an existing compiler."
)

_PROBE_SOURCE = r"""
#include <stdint.h>
#include <math.h>
#ifdef LS_PROBE_OMP
#include <omp.h>
#endif
int32_t ls_kernel(void **p, int64_t *d) {
    int64_t s = 0;
#ifdef LS_PROBE_OMP
    #pragma omp parallel for reduction(+:s)
#endif
    for (int64_t i = 0; i < d[0]; i++) s += i;
    d[1] = s + (int64_t)sqrt((double)d[0]);
#ifdef LS_PROBE_OMP
    d[2] = omp_get_max_threads();
#endif
    return 0;
}
"""


class CompilerNotFoundError(RuntimeError):
    """No usable C compiler was found; the message says how to install one."""

    def __init__(self, message: str = _INSTALL_HELP):
        super().__init__(message)


class CompileError(RuntimeError):
    """The C compiler rejected a kernel; the message holds its stderr and the saved source path."""


@dataclass(frozen=True)
class CompilerInfo:
    """What the runtime knows about the C compiler, fixed for the life of the process."""

    path: str            # the compiler executable as found on PATH (what is run: a ccache or
                         # clang symlink behaves by its name)
    resolved: str        # its realpath (part of the identity)
    args: tuple          # extra words from $CC after the executable ("ccache gcc" -> ("gcc",))
    version: str         # first line of ``<cc> --version``
    march_native: bool   # ``-march=native`` accepted
    openmp: bool         # ``-fopenmp`` accepted, omp.h found and libgomp/libomp links
    mvec: bool           # loops call libmvec's vector variants of libm's functions
    flags: tuple         # the complete flag list used for every kernel (without the -o/-l parts)
    link_flags: tuple    # libraries, placed after the source file

    @property
    def identity(self) -> str:
        return "\n".join([self.resolved, *self.args, self.version])

    @property
    def argv0(self) -> list:
        return [self.path, *self.args]


_lock = threading.Lock()
_info: CompilerInfo | None = None
_probed: tuple | None = None      # what the probe said of _info's compiler, before the switches
_machine: str | None = None
_cc_warned: set = set()           # $CC values already warned about (once each per process)
_remembered: dict = {}            # probe_dir -> CompilerInfo or None, read once per process
_remember_written: set = set()    # probe_dirs this process wrote its compiler into


def _reset_for_tests() -> None:
    """Forget the compiler and machine identification (tests change $CC / PATH)."""
    global _info, _probed, _machine
    with _lock:
        _info = None
        _probed = None
        _machine = None
        _cc_warned.clear()
        _remembered.clear()
        _remember_written.clear()


# ---------------------------------------------------------------------------------------------
# Private files
# ---------------------------------------------------------------------------------------------

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def secure(st) -> bool:
    """Owned by the current user and not writable by group or others."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return not (st.st_mode & 0o022)


def open_private(path: str, max_size: int) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its ``fstat``, for a regular file that
    :func:`secure` accepts and that is at most ``max_size`` bytes.

    Raises FileNotFoundError when it is absent, PermissionError when it is anything else than
    such a file (another owner, group/other-writable, a symlink, a FIFO, a device) and
    ValueError when it is larger. The ``lstat`` comes first so that nothing but a regular file
    is ever opened (opening a FIFO blocks until a writer comes; a device may act on open);
    O_NONBLOCK and O_NOFOLLOW cover a swap between the ``lstat`` and the ``open``, and the
    ``fstat`` of the descriptor is what is judged.
    """
    if not _st.S_ISREG(os.lstat(path).st_mode):
        raise PermissionError(f"{path} is not a regular file")
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not _st.S_ISREG(st.st_mode) or not secure(st):
            raise PermissionError(f"{path} is not a regular file of the current user that "
                                  "only this user can write")
        if st.st_size > max_size:
            raise ValueError(f"{path} is larger than {max_size} bytes")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, size: int) -> bytes:
    """Up to ``size + 1`` bytes from ``fd`` (one more than expected shows a file that grew)."""
    chunks, n = [], 0
    while n <= size:
        b = os.read(fd, size + 1 - n)
        if not b:
            break
        chunks.append(b)
        n += len(b)
    return b"".join(chunks)


def read_private(path: str, max_size: int) -> bytes:
    """The contents of a file :func:`open_private` accepts (raising as it does).

    A record is read only as a regular file, owned by the current user, writable by nobody else, of
    bounded size, opened without following a symlink and without blocking (a FIFO planted in its
    place would otherwise hang every later process).
    """
    fd, st = open_private(path, max_size)
    try:
        return read_fd(fd, max_size)
    finally:
        os.close(fd)


def _write_record(path: str, data: dict) -> None:
    """Write a small JSON record under a temporary name and rename it into place (best effort:
    a record is an optimisation, never needed for correctness)."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------
# Identification
# ---------------------------------------------------------------------------------------------

def _find_compiler() -> tuple[str, tuple]:
    """(absolute executable path, extra argv words): $CC if it names a program, else cc, gcc, clang.

    A $CC that names no program (``CC=/nonexistent``, a compiler not installed) is not an
    error: lazysparse is a library, the program that imports it may run where its author's $CC
    does not exist, and kernels compiled by another C99 compiler are just as right. It is not
    silent either: a RuntimeWarning naming the value (once per process and value) says that
    cc, gcc and clang are searched instead, and when none of them exists the
    :class:`CompilerNotFoundError` names it too.
    """
    candidates = []
    cc_env = os.environ.get("CC", "").strip()
    bad_cc = None
    if cc_env:
        try:
            words = shlex.split(cc_env)  # $CC may carry words: "ccache gcc", "gcc -m64"
        except ValueError:
            words = cc_env.split()
        if words:
            found = shutil.which(words[0])
            if found:
                return os.path.abspath(found), tuple(words[1:])
            bad_cc = cc_env
            if cc_env not in _cc_warned:
                _cc_warned.add(cc_env)
                warnings.warn(f"lazysparse: the CC environment variable ({cc_env!r}) names no "
                              f"program ({words[0]!r} is not an executable file or on PATH); "
                              "looking for cc, gcc and clang on PATH instead",
                              RuntimeWarning, stacklevel=4)
    candidates += [("cc", ()), ("gcc", ()), ("clang", ())]
    for cand, args in candidates:
        found = shutil.which(cand)
        if found:
            return os.path.abspath(found), args
    if bad_cc is not None:
        raise CompilerNotFoundError(f"lazysparse: the CC environment variable ({bad_cc!r}) names "
                                    "no program, and no cc, gcc or clang is on PATH.\n"
                                    + _INSTALL_HELP)
    raise CompilerNotFoundError()


def machine_id() -> str:
    """``platform.machine()`` plus a hash of the CPU model name and feature flags."""
    global _machine
    if _machine is not None:
        return _machine
    parts = [platform.machine() or "unknown"]
    try:
        with open("/proc/cpuinfo", "rb") as f:
            head = f.read(65536)
        block = head.split(b"\n\n", 1)[0]  # first processor only
        keep = []
        for line in block.splitlines():
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k in (b"model name", b"flags", b"features", b"cpu implementer", b"cpu part",
                     b"vendor_id", b"cpu family", b"model", b"isa", b"cpu"):
                keep.append(k + b"=" + v.strip())
        if keep:
            parts.append(hashlib.sha256(b"\n".join(keep)).hexdigest()[:16])
    except OSError:
        parts.append(platform.processor() or "")
    _machine = "-".join(p for p in parts if p)
    return _machine


def _version_line(argv0: list) -> str:
    path = argv0[0]
    try:
        r = subprocess.run([*argv0, "--version"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise CompilerNotFoundError(
            f"the C compiler {path!r} could not be run ({e}).\n" + _INSTALL_HELP) from e
    out = (r.stdout or r.stderr or "").strip().splitlines()
    return out[0].strip() if out else "unknown"


def _try_compile(argv0: list, flags, defines=(), source=_PROBE_SOURCE, link=LINK_FLAGS, check=None) -> bool:
    """Whether ``source`` compiles and links with these flags; ``check(path)`` then decides on
    the shared object built (loading and running it)."""
    d = tempfile.mkdtemp(prefix="lazysparse-probe-")
    try:
        src = os.path.join(d, "probe.c")
        with open(src, "w") as f:
            f.write(source)
        out = os.path.join(d, "probe.so")
        argv = [*argv0, *flags, *defines, src, "-o", out, *link]
        r = subprocess.run(argv, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        return r.returncode == 0 and (check is None or check(out))
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _mvec_runs(path: str) -> bool:
    """The probe's kernel loads (every vector variant resolved: RTLD_NOW) and computes what
    libm computes, to a few ulp, at a vector's worth of points and a remainder."""
    import ctypes
    import math
    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOW", 2))
    except OSError:
        return False
    n = 19
    xs = [0.05 + 0.04 * i for i in range(n)]
    a, o = (ctypes.c_double * n)(*xs), (ctypes.c_double * n)()
    af, of = (ctypes.c_float * n)(*xs), (ctypes.c_float * n)()
    p = (ctypes.c_void_p * 4)(ctypes.addressof(a), ctypes.addressof(o), ctypes.addressof(af),
                              ctypes.addressof(of))
    dd = (ctypes.c_int64 * 1)(n)
    lib.ls_kernel.restype = ctypes.c_int32
    if lib.ls_kernel(p, dd) != 0:
        return False
    py = {"exp10": lambda x: 10.0 ** x, "exp2": lambda x: 2.0 ** x, "cbrt": lambda x: x ** (1 / 3),
          "acosh": lambda x: math.acosh(1 + x)}
    for i, x in enumerate(xs):
        want = sum(py[f](x) if f in py else getattr(math, f)(x, x) if f in MVEC_BINARY else getattr(math, f)(x)
                   for f in MVEC_UNARY + MVEC_BINARY)
        if not (math.isclose(o[i], want, rel_tol=1e-12) and math.isclose(of[i], want, rel_tol=1e-4)):
            return False
    return True


def _probe_mvec(argv0: list, flags) -> bool:
    """Whether kernels built with ``flags`` may call libmvec's vector variants (``MVEC_FLAGS``)."""
    return _try_compile(argv0, list(flags), MVEC_FLAGS, _MVEC_PROBE_SOURCE, MVEC_LINK, _mvec_runs)


def _probe(argv0: list) -> tuple[bool, bool, bool, bool]:
    """(march_native, openmp, align_loops, mvec) for this compiler: two compiles when all work."""
    base = list(BASE_FLAGS)
    if _try_compile(argv0, base + ["-march=native", "-fopenmp", *ALIGN_FLAGS], ["-DLS_PROBE_OMP"]):
        march = omp = align = True
    else:
        march = _try_compile(argv0, base + ["-march=native"])
        omp = _try_compile(argv0, base + ["-fopenmp"], ["-DLS_PROBE_OMP"])
        align = _try_compile(argv0, base + list(ALIGN_FLAGS))
    # (built with the kernels' own flags, whose -march picks the variants called)
    mvec = _probe_mvec(argv0, _flags(march, omp, align))
    return march, omp, align, mvec


def _flags(march: bool, omp: bool, align: bool) -> list:
    flags = list(BASE_FLAGS)
    if align:
        flags += ALIGN_FLAGS
    if march:
        flags.append("-march=native")
    if omp:
        flags.append("-fopenmp")
    return flags


def _probe_cache_path(probe_dir: str | None, argv0: list) -> str | None:
    # keyed by the compiler executable's identity on disk (path, mtime, size), not by its
    # ``--version`` line: that line is what the file remembers, so that a new process that
    # finds its kernels on disk runs no subprocess at all
    if not probe_dir:
        return None
    try:
        st = os.stat(argv0[0])
    except OSError:
        return None
    ident = "\0".join([os.path.realpath(argv0[0]), *argv0, str(st.st_mtime_ns), str(st.st_size), machine_id(),
                       " ".join(BASE_FLAGS + ALIGN_FLAGS), "probe-v5"])
    return os.path.join(probe_dir, "compiler-" + hashlib.sha256(ident.encode()).hexdigest()[:24]
                        + ".json")


def _read_probe(cache_path: str | None):
    if not cache_path:
        return None
    try:
        data = json.loads(read_private(cache_path, 4096).decode())
        if not isinstance(data["version"], str):
            return None
        return (data["version"], bool(data["march_native"]), bool(data["openmp"]),
                bool(data["align_loops"]), bool(data["mvec"]))
    except (OSError, ValueError, KeyError, TypeError):  # (absent, refused, or not ours to read)
        return None


def _write_probe(cache_path: str | None, version: str, march: bool, omp: bool, align: bool,
                 mvec: bool) -> None:
    if cache_path:
        _write_record(cache_path, {"version": version, "march_native": march, "openmp": omp,
                                   "align_loops": align, "mvec": mvec})


def _make_info(path: str, args, version: str, march: bool, omp: bool, align: bool,
               mvec: bool, resolved: str | None = None) -> CompilerInfo:
    """The CompilerInfo of a probed compiler, under this process's switches."""
    # LAZYSPARSE_SIMD=0: the compiler's baseline target, without -march=native: every
    # hand-written vector path (AVX-512 segment sums, AVX2/AVX-512 workspace probes, libmvec)
    # is compiled out, as on a machine without those instructions. The suite runs both ways.
    simd = os.environ.get("LAZYSPARSE_SIMD", "1").strip() != "0"
    march = march and simd
    flags = _flags(march, omp, align)
    # LAZYSPARSE_MVEC=0: libm's scalar functions (1 ulp) even where libmvec works, read once
    # per process like the rest of the compiler's identity
    mvec = mvec and simd and os.environ.get("LAZYSPARSE_MVEC", "1").strip() != "0"
    if mvec:
        flags += MVEC_FLAGS
    return CompilerInfo(path=path, resolved=resolved or os.path.realpath(path), args=tuple(args),
                        version=version, march_native=march, openmp=omp, mvec=mvec,
                        flags=tuple(flags), link_flags=MVEC_LINK if mvec else LINK_FLAGS)


def compiler_info(probe_dir: str | None = None) -> CompilerInfo:
    """Find, identify and probe the C compiler once per process.

    ``probe_dir`` (the kernel cache directory) lets the probe result be remembered across
    processes; it is keyed by the compiler's path, version line, mtime and size and the machine.
    Raises :class:`CompilerNotFoundError` when there is no compiler ($CC first when it names a
    program, else cc, gcc, clang on PATH: see ``_find_compiler``).

    The identity is the ``cc --version`` first line; ``-march=native`` and ``-fopenmp`` are probed,
    and the probe result is remembered on disk next to the kernel cache so that a new process does not
    pay for a probe compile. The CPU identification goes into cache keys because on-disk builds use
    ``-march=native``.
    """
    global _info, _probed
    info = _info
    if info is not None:
        return info
    with _lock:
        if _info is not None:
            return _info
        path, args = _find_compiler()
        argv0 = [path, *args]
        cpath = _probe_cache_path(probe_dir, argv0)
        probed = _read_probe(cpath)
        if probed is None:
            version = _version_line(argv0)
            march, omp, align, mvec = _probe(argv0)
            _write_probe(cpath, version, march, omp, align, mvec)
        else:
            version, march, omp, align, mvec = probed
        _probed = (version, march, omp, align, mvec)
        _info = _make_info(path, args, version, march, omp, align, mvec)
        return _info


# ---------------------------------------------------------------------------------------------
# The last compiler of a cache directory
# ---------------------------------------------------------------------------------------------

def _remembered_path(probe_dir: str) -> str:
    # one record per machine: a cache directory on a shared home is used from several
    return os.path.join(probe_dir, "compiler-last-"
                        + hashlib.sha256(machine_id().encode()).hexdigest()[:16] + ".json")


def remember_compiler(probe_dir: str | None) -> None:
    """Record this process's compiler (as probed, before LAZYSPARSE_SIMD/MVEC) in
    ``probe_dir`` as the last one that built kernels there: :func:`remembered_compiler` reads
    it where no compiler can be found. Written once per process and directory, after a compile
    (a process that only loads kernels leaves the record as it is).

    The last compiler that built kernels into a cache directory is remembered there, so that a
    process without a compiler can still compute the keys of, and load, the kernels already on
    disk.
    """
    with _lock:
        info, probed = _info, _probed
        if not probe_dir or info is None or probed is None or probe_dir in _remember_written:
            return
        _remember_written.add(probe_dir)
    version, march, omp, align, mvec = probed
    _write_record(_remembered_path(probe_dir), {
        "path": info.path, "resolved": info.resolved, "args": list(info.args),
        "version": version, "march_native": march, "openmp": omp, "align_loops": align,
        "mvec": mvec, "machine": machine_id()})


def remembered_compiler(probe_dir: str | None) -> CompilerInfo | None:
    """The CompilerInfo of the last compiler that built kernels into ``probe_dir`` on this
    machine (see :func:`remember_compiler`), under this process's switches; None when there is
    no such record or it is refused (not a private regular file, malformed, another machine).

    Only the cache uses it, and only to compute keys: a key hashes the compiler's identity
    and flags with the source, so an entry found under it was built from this source by that
    compiler with those flags; nothing is ever compiled with this CompilerInfo.
    """
    if not probe_dir:
        return None
    with _lock:
        if probe_dir in _remembered:
            return _remembered[probe_dir]
    info = None
    try:
        r = json.loads(read_private(_remembered_path(probe_dir), 8192).decode())
        strings = [r["path"], r["resolved"], r["version"], *r["args"]]
        if r["machine"] == machine_id() and all(isinstance(x, str) for x in strings):
            info = _make_info(r["path"], r["args"], r["version"], bool(r["march_native"]),
                              bool(r["openmp"]), bool(r["align_loops"]), bool(r["mvec"]),
                              resolved=r["resolved"])
    except (OSError, ValueError, KeyError, TypeError):
        info = None
    with _lock:
        _remembered[probe_dir] = info
    return info


# ---------------------------------------------------------------------------------------------
# Compilation
# ---------------------------------------------------------------------------------------------

def compile_shared(info: CompilerInfo, src_path: str, out_path: str, extra=()) -> float:
    """Compile ``src_path`` to the shared object ``out_path``; returns the seconds it took.
    ``extra``: arguments placed before the source (a pre-included header: runtime/pch.py).

    Raises :class:`CompileError` (a :class:`RuntimeError`) with the compiler's stderr (first
    2000 characters) and the path of the saved source when the compiler fails.
    """
    argv = [*info.argv0, *info.flags, *extra, src_path, "-o", out_path, *info.link_flags]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                           stdin=subprocess.DEVNULL)
    except FileNotFoundError as e:
        raise CompilerNotFoundError(
            f"the C compiler {info.path!r} disappeared ({e}).\n" + _INSTALL_HELP) from e
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(
            f"lazysparse: running the C compiler failed ({e}); source saved at {src_path}") from e
    dt = time.perf_counter() - t0
    if r.returncode != 0 or not os.path.exists(out_path):
        err = (r.stderr or "") + (r.stdout or "")
        if len(err) > 2000:
            err = err[:2000] + "\n... (truncated)"
        raise CompileError(
            f"lazysparse: compiling a kernel failed (exit status {r.returncode}).\n"
            f"command: {' '.join(argv)}\n"
            f"source saved at: {src_path}\n"
            f"compiler output:\n{err}")
    return dt
