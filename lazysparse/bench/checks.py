"""Result checks shared by the demo and the benchmarks: a lazysparse (or any peer's) result
compared with a NumPy / scipy.sparse reference by value, never by format, and without densifying
a large sparse result."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# Dense comparisons are used when the dense form is at most this many elements.
_DENSE_CHECK_LIMIT = 4_000_000


def _to_numpy(a):
    """A concrete lazysparse result as a NumPy array or scipy sparse array."""
    if getattr(a, "is_lazy", False):
        a = a.materialize()
    if a.format.is_dense:
        return np.asarray(a.todense())
    return a.to_scipy()


def allclose(result, expected, rtol=1e-7, atol=1e-9) -> bool:
    """Compare a lazysparse result with a NumPy / scipy.sparse reference (values, not formats).
    Non-finite values must be equal (NaN with NaN, infinities with their sign); the tolerances
    apply to the finite ones."""
    got = _to_numpy(result)
    if got.shape != expected.shape:
        return False
    # sums of large values that cancel are exact only to rounding of the summands: scale atol
    # (by the finite values: an inf would make every tolerance infinite)
    atol = max(atol, 1e-12 * _finite_max(expected))
    n_elems = int(np.prod(got.shape, dtype=np.int64))
    if not sp.issparse(got) and not sp.issparse(expected):
        return bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))
    if n_elems <= _DENSE_CHECK_LIMIT:
        g = got.toarray() if sp.issparse(got) else np.asarray(got)
        e = expected.toarray() if sp.issparse(expected) else np.asarray(expected)
        return bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True))
    # Large sparse: compare through the difference, never densifying; the non-finite entries
    # first, by position and value (their difference would be NaN)
    g, g_bad = _without_nonfinite(got)
    e, e_bad = _without_nonfinite(expected)
    if not all(np.array_equal(a, b, equal_nan=True) for a, b in zip(g_bad, e_bad)):
        return False
    diff = abs(g - e)
    if diff.nnz == 0:
        return True
    scale = abs(e).max() if e.nnz else 0.0
    return bool(diff.max() <= atol + rtol * scale)


def _finite_max(a) -> float:
    v = np.asarray(a.data if sp.issparse(a) else a)
    v = v[np.isfinite(v)]
    return float(np.max(np.abs(v))) if v.size else 0.0


def _without_nonfinite(a):
    """(canonical CSR copy of ``a`` with its non-finite entries zeroed, (rows, columns, values)
    of those entries)."""
    m = sp.csr_array(a) if sp.issparse(a) else sp.csr_array(np.asarray(a))
    m = m.copy()
    m.sum_duplicates()
    bad = ~np.isfinite(m.data)
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))[bad]
    key = (rows, m.indices[bad].astype(np.int64), m.data[bad])
    m.data[bad] = 0
    return m, key


def to_host(r):
    """Any column's result (lazysparse, torch, GraphBLAS, pydata/sparse, finch) as a NumPy array
    or a scipy sparse array."""
    if sp.issparse(r) or isinstance(r, np.ndarray):
        return r
    mod = type(r).__module__.split(".")[0]
    if mod == "lazysparse":
        return _to_numpy(r)
    if mod == "torch":
        import torch
        if r.layout == torch.sparse_csr:
            return sp.csr_array((r.values().numpy(), r.col_indices().numpy(), r.crow_indices().numpy()),
                                shape=tuple(r.shape))
        if r.is_sparse:
            r = r.coalesce()
            idx = r.indices().numpy()
            return sp.coo_array((r.values().numpy(), (idx[0], idx[1])), shape=tuple(r.shape)).tocsr()
        return r.numpy()
    if mod == "graphblas":
        if r.nvals == r.nrows * r.ncols:
            return r.to_dense(fill_value=0)
        return sp.csr_array(__import__("graphblas").io.to_scipy_sparse(r, format="csr"))
    if mod == "sparse":
        return r.to_scipy_sparse().tocsr() if r.ndim == 2 else r.todense()
    if mod in ("finchlite", "finch"):
        return r.to_numpy()  # its default formatter: every result is a dense BufferizedNDArray
    return np.asarray(r)


def check(result, expected) -> bool:
    """np.allclose with rtol 1e-6 and atol 1e-6 x max |expected|, never densifying a large sparse
    expected result (a dense result against a sparse oracle is compared at its pattern, plus the
    mass outside it)."""
    got = to_host(result)
    if got.shape != expected.shape:
        return False
    if sp.issparse(expected):
        scale = float(abs(expected).max()) if expected.nnz else 0.0
    else:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    rtol, atol = 1e-6, 1e-6 * scale + 1e-12
    if sp.issparse(expected) and not sp.issparse(got):
        got = np.asarray(got)
        e = sp.coo_array(expected)
        at = got[e.row, e.col]
        if not np.allclose(at, e.data, rtol=rtol, atol=atol):
            return False
        total = 0.0
        flat = got.reshape(-1)
        for s in range(0, flat.size, 1 << 24):  # in chunks: got may be a large dense n x m result
            total += float(np.abs(flat[s:s + (1 << 24)]).sum())
        outside = total - float(np.abs(at).sum())
        return abs(outside) <= atol * max(1.0, e.nnz ** 0.5) + 1e-9 * float(np.abs(at).sum())
    if sp.issparse(got) and not sp.issparse(expected):
        got = got.toarray()
    return allclose(_Host(got), expected, rtol=rtol, atol=atol)


class _Host:
    """A NumPy/scipy result dressed as a concrete lazysparse array for ``allclose``."""
    is_lazy = False

    def __init__(self, a):
        self.a = a
        self.format = type("F", (), {"is_dense": not sp.issparse(a)})()

    def todense(self):
        return self.a

    def to_scipy(self):
        return self.a
