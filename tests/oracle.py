"""Oracles and builders shared by test modules in several folders: operands in every format
and index width from dense NumPy, hypothesis example counts, and checks of kernels' modes and of
canonical sparse results."""
from __future__ import annotations

import os

import numpy as np
from hypothesis import settings
import scipy.sparse as sp
import sparse as pydata

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log

# LAZYSPARSE_HYPOTHESIS_SCALE=4 runs four times as many examples per test (bug hunting)
SCALE = float(os.environ.get("LAZYSPARSE_HYPOTHESIS_SCALE", "1"))


def examples(n):
    return settings(max_examples=max(1, int(n * SCALE)))


# -- operands ---------------------------------------------------------------------------------------
FORMATS_2D = ("dense", "csr", "csc", "coo", "dcsr", "dcsc", "csf")
FORMATS_ND = ("dense", "coo", "csf")          # 1-d and 3-d
SPARSE_FMTS = FORMATS_2D[1:]
WIDTHS = (np.int32, np.int64)
F64, F32, I64, BOOL, C128 = (np.dtype(d) for d in ("float64", "float32", "int64", "bool", "complex128"))
NUMERIC = (F64, F32, I64)
DENSITIES = (0.0, 0.2, 0.5, 1.0)


def formats_for(ndim):
    return FORMATS_2D if ndim == 2 else FORMATS_ND


def _with_width(S, width):
    """The scipy array ``S`` with its index arrays in ``width`` (scipy keeps int64 when asked)."""
    if S.format == "coo":
        return sp.coo_array((S.data, (S.row.astype(width), S.col.astype(width))), shape=S.shape)
    cls = sp.csr_array if S.format == "csr" else sp.csc_array
    return cls((S.data, S.indices.astype(width), S.indptr.astype(width)), shape=S.shape)


def build(D, fmt, width=np.int32):
    """``D`` (NumPy) as an ``ls.Array`` of format ``fmt``, built from index arrays of ``width``."""
    D = np.asarray(D)
    if fmt == "dense":
        return ls.asarray(D.copy())
    if D.ndim == 2:
        kind = {"csc": "csc", "dcsc": "csc", "coo": "coo"}.get(fmt, "csr")
        S = _with_width({"csr": sp.csr_array, "csc": sp.csc_array, "coo": sp.coo_array}[kind](D), width)
        if fmt in ("csr", "csc", "coo"):
            A = ls.asarray(S)
            assert A.format == getattr(ls, fmt) and A.storage.index_dtype == width
            return A
        return ls.asarray(S, format=fmt)
    nz = np.nonzero(D)
    coords = np.array(nz, dtype=width).reshape(D.ndim, -1)
    return ls.asarray(pydata.COO(coords, D[nz], shape=D.shape), format=fmt)


def _modes(fn):
    with kernel_log() as log:
        out = fn()
    return out, [e[0].mode for e in log if isinstance(e, tuple)]


def _check_canonical(st_, shape):
    """Sorted, duplicate-free coordinates and monotone positions (a CSR/CSC result)."""
    pos, crd = st_.pos[1], st_.crd[1]
    assert pos[0] == 0 and pos[-1] == len(crd) and np.all(np.diff(pos) >= 0)
    for r in range(len(pos) - 1):
        assert np.all(np.diff(crd[pos[r]:pos[r + 1]]) > 0)
