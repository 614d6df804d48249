"""A precompiled ``<immintrin.h>`` for the kernels that include it: parsing that header is most
of a vector kernel's compile (0.5-0.9 s of 1.2-2.6 s on the Zen 3 VM, against 0.06 s from a
precompiled one), so from the second such kernel a process compiles, it builds the header once
with the kernels' own flags in a private folder of its own and has the compiler ``-include`` it.
GCC checks that the precompiled header matches the command and otherwise reads the header as
text, so a mismatch costs time, never a different kernel; the code built is the same.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading

_INCLUDE = "#include <immintrin.h>"
_lock = threading.Lock()
_wanted: dict = {}    # compiler identity + flags -> compiles that included the header
_built: dict = {}     # compiler identity + flags -> path of the header (its .gch beside it), or None
_macros: dict = {}    # compiler identity + flags -> the macros the compiler predefines
STATS = {"builds": 0, "uses": 0}


def include_args(info, source: str) -> list:
    """The compiler arguments that pre-include the precompiled header for ``source`` (none when
    ``source`` does not include it under a test that holds for these flags, for the first such
    source of the process, or when the header did not build)."""
    if _INCLUDE not in source:
        return []
    key = (info.identity, info.flags)
    macros = _predefined(info, key)
    # the printers include it under ``defined(__AVX512F__)`` tests, or ``defined(__AVX2__)`` for
    # the workspaces: a source whose include is skipped gains nothing from a pre-include
    if not ("__AVX512F__" in macros or ("__AVX2__" in macros and "defined(__AVX2__)" in source)):
        return []
    with _lock:
        _wanted[key] = _wanted.get(key, 0) + 1
        if _wanted[key] < 2:  # (one vector kernel in a process: building the header would not pay)
            return []
        if key not in _built:
            _built[key] = _build(info)
        path = _built[key]
        if path is not None:
            STATS["uses"] += 1
    return ["-include", path] if path is not None else []


def _predefined(info, key) -> frozenset:
    """The macro names the compiler predefines with the kernels' flags (once per process)."""
    got = _macros.get(key)
    if got is None:
        try:
            r = subprocess.run([*info.argv0, *_header_flags(info), "-dM", "-E", "-x", "c", os.devnull],
                               capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
            got = frozenset(ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("#define "))
        except (OSError, subprocess.SubprocessError):
            got = frozenset()
        _macros[key] = got
    return got


def _header_flags(info) -> list:
    return [f for f in info.flags if f != "-shared"]


def _build(info):
    """Build the header in a new private folder (mkdtemp: 0700, this user's, removed at exit):
    its path, or None when the compiler would not build it."""
    d = tempfile.mkdtemp(prefix="lazysparse-pch-")
    atexit.register(shutil.rmtree, d, True)
    header = os.path.join(d, "ls_immintrin.h")
    with open(header, "w") as f:
        f.write(_INCLUDE + "\n")
    try:
        r = subprocess.run([*info.argv0, *_header_flags(info), "-x", "c-header", header, "-o", header + ".gch"],
                           capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0 or not os.path.exists(header + ".gch"):
        return None
    STATS["builds"] += 1
    return header
