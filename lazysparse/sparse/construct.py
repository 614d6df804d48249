"""scipy.sparse's array classes and constructors over lazysparse arrays. ``csr_array``,
``csc_array`` and ``coo_array`` take every input scipy's take (dense, sparse of any scipy format
including dok, lil, bsr and dia, a shape, ``(data, (row, col))``, ``(data, indices, indptr)``),
read through scipy's own constructors, and give a lazysparse array of that format;
``isinstance(x, csr_array)`` asks a lazysparse array's format. The constructors build with
lazysparse's operations (``hstack``, ``kron``, ``tril``, ...) where they compute, with scipy's
generators where they only make data (``random_array``), and convert to ``format=`` when asked.
Where scipy's default format is DIA (``eye_array``, ``diags_array``), the result is CSR."""
from __future__ import annotations

import numpy as np

from lazysparse.api import construct as C
from lazysparse.api import joining as J
from lazysparse.api.creation import asarray, eye, zeros
from lazysparse.array import Array


def _formatted(x, format, dtype=None):
    if dtype is not None and np.dtype(dtype) != x.dtype:
        x = x.astype(dtype)
    return x if format is None else x.asformat(format)


class _FormatClass(type):
    """``isinstance(x, csr_array)``: ``x`` a lazysparse array of that format (a lazy one's
    format is inferred); ``sparray``: of any sparse format."""

    def __instancecheck__(cls, obj):
        if not isinstance(obj, Array):
            return False
        fmt = obj.format
        return not fmt.is_dense if cls._format is None else fmt.name == cls._format


class sparray(metaclass=_FormatClass):
    """The sparse lazysparse arrays, for ``isinstance`` (scipy's ``sparray``)."""
    _format = None

    def __new__(cls, *args, **kwargs):
        raise TypeError("sparray: use csr_array, csc_array or coo_array to make a sparse array")


def _make(fmt, arg1, shape, dtype, copy):
    import scipy.sparse as sp
    if isinstance(arg1, Array):
        out = _formatted(arg1, fmt, dtype)
        return out.materialize() if out.is_lazy else out
    S = getattr(sp, f"{fmt}_array")(arg1, shape=shape, dtype=dtype, copy=copy)
    return asarray(S)


class csr_array(sparray):
    """``csr_array(arg1, shape=None, dtype=None, copy=False)``, as scipy's: a lazysparse array
    in CSR (scipy's CSR buffers are shared, not copied, unless ``copy``)."""
    _format = "csr"

    def __new__(cls, arg1, shape=None, dtype=None, copy=False, *, maxprint=None):
        return _make("csr", arg1, shape, dtype, copy)


class csc_array(sparray):
    """``csc_array(arg1, shape=None, dtype=None, copy=False)``, as scipy's, in CSC."""
    _format = "csc"

    def __new__(cls, arg1, shape=None, dtype=None, copy=False, *, maxprint=None):
        return _make("csc", arg1, shape, dtype, copy)


class coo_array(sparray):
    """``coo_array(arg1, shape=None, dtype=None, copy=False)``, as scipy's, in COO (sorted, its
    duplicates summed: lazysparse's COO is canonical)."""
    _format = "coo"

    def __new__(cls, arg1, shape=None, dtype=None, copy=False, *, maxprint=None):
        return _make("coo", arg1, shape, dtype, copy)


def random_array(shape, *, density=0.01, format="coo", dtype=None, rng=None, data_sampler=None):
    """scipy's ``random_array`` (its generator makes the values), as a lazysparse array."""
    import scipy.sparse as sp
    S = sp.random_array(shape, density=density, format="coo", dtype=dtype, rng=rng,
                        data_sampler=data_sampler)
    return asarray(S).asformat(format) if format != "coo" else asarray(S)


def eye_array(m, n=None, *, k=0, dtype=float, format=None):
    """Ones on diagonal ``k`` of an ``m`` x ``n`` array (CSR where scipy's default is DIA)."""
    return eye(m, n, k=k, format=format or "csr", dtype=dtype)


def identity(n, dtype="d", format=None):
    """The ``n`` x ``n`` identity (CSR where scipy's default is DIA)."""
    return eye(n, format=format or "csr", dtype=dtype)


def diags_array(diagonals, /, *, offsets=0, shape=None, format=None, dtype=None):
    """scipy's ``diags_array`` (CSR where scipy's default is DIA)."""
    return C.diags(diagonals, offsets, shape=shape, format=format or "csr", dtype=dtype)


def hstack(blocks, format=None, dtype=None):
    return _formatted(J.hstack([asarray(b) for b in blocks]), format, dtype)


def vstack(blocks, format=None, dtype=None):
    return _formatted(J.vstack([asarray(b) for b in blocks]), format, dtype)


def kron(A, B, format=None):
    return _formatted(C.kron(asarray(A), asarray(B)), format)


def kronsum(A, B, format=None):
    """``kron(I_n, A) + kron(B, I_m)`` for square ``A`` (m x m) and ``B`` (n x n), as scipy's."""
    A, B = asarray(A), asarray(B)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"kronsum: A is not square, shape {A.shape}")
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"kronsum: B is not square, shape {B.shape}")
    m, n = A.shape[0], B.shape[0]
    out = C.kron(eye(n, dtype=A.dtype), A) + C.kron(B, eye(m, dtype=B.dtype))
    return _formatted(out, format)


def tril(A, k=0, format=None):
    return _formatted(C.tril(asarray(A), k), format)


def triu(A, k=0, format=None):
    return _formatted(C.triu(asarray(A), k), format)


def block_array(blocks, *, format=None, dtype=None):
    """Blocks arranged in a grid, ``None`` for a block of zeros, as scipy's ``block_array``."""
    if not all(isinstance(row, (list, tuple)) or isinstance(row, np.ndarray) and row.dtype == object
               for row in blocks):
        raise ValueError("block_array: blocks must be 2-D (a list of lists of blocks)")
    grid = [list(row) for row in blocks]
    if not grid or any(len(row) != len(grid[0]) for row in grid) or not grid[0]:
        raise ValueError("block_array: blocks must be 2-D, with rows of one length")
    heights, widths = {}, {}
    for i, row in enumerate(grid):
        for j, b in enumerate(row):
            if b is None:
                continue
            b = row[j] = asarray(b)
            if b.ndim != 2:
                raise ValueError(f"block_array: block [{i}, {j}] is not 2-d (shape {b.shape})")
            for what, d, key, size in (("row", heights, i, b.shape[0]), ("column", widths, j, b.shape[1])):
                if d.setdefault(key, size) != size:
                    raise ValueError(f"block_array: blocks[{i},:] and blocks[:,{j}] have "
                                     f"incompatible {what} dimensions: {d[key]} and {size}")
    for i in range(len(grid)):
        if i not in heights:
            raise ValueError(f"block_array: blocks[{i},:] is all None: its height is unknown")
    for j in range(len(grid[0]) if grid else 0):
        if j not in widths:
            raise ValueError(f"block_array: blocks[:,{j}] is all None: its width is unknown")
    kinds = [b.dtype for row in grid for b in row if b is not None]
    dt = np.result_type(*kinds) if kinds else np.float64
    rows = [J.hstack([b if b is not None else zeros((heights[i], widths[j]), format="csr", dtype=dt)
                      for j, b in enumerate(row)]) for i, row in enumerate(grid)]
    return _formatted(J.vstack(rows), format or "coo", dtype)


def bmat(blocks, format=None, dtype=None):
    return block_array(blocks, format=format, dtype=dtype)


def find(A):
    """``(row, col, values)`` of the nonzero entries in row-major order, as scipy's ``find``."""
    S = asarray(A).to_scipy("coo")
    keep = S.data != 0
    return S.row[keep], S.col[keep], S.data[keep]


def save_npz(file, matrix, compressed=True):
    """scipy's ``save_npz`` of the array (its CSR, CSC or COO buffers; ``load_npz`` reads it)."""
    import scipy.sparse as sp
    sp.save_npz(file, asarray(matrix).to_scipy(), compressed=compressed)


def load_npz(file):
    import scipy.sparse as sp
    return asarray(sp.load_npz(file))
