"""Run lazysparse kernels on validated inputs whose every buffer sits against a guard page.

Used by ``test_validation.py`` in a subprocess: ``python _fenced_run.py cases`` first feeds ``asarray``
the malformed containers that scipy/pydata convert natively (``_malformed.RISKY``), then exits 0 when
every operation on every structure gave NumPy's value; a kernel reading outside an input buffer dies with
SIGSEGV (the test reports the signal and the last case printed). ``selftest`` feeds one kernel a
structure that *failed* validation, so that the fence is seen to fire.

``check_ops`` is also imported by the in-process hypothesis tests: one list of operations, so the
same kernels serve both (compiled once per test session).
"""
from __future__ import annotations

import faulthandler
import os
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fence import fenced  # noqa: E402

import lazysparse as ls  # noqa: E402

TOL = dict(rtol=1e-12, atol=1e-12)

# (name, lazy expression of A (and dense operands made by `mk`), NumPy value of the dense D)
# `full` runs every operation; the other families run a subset, to bound the number of kernels.
OPS = {
    "matvec": (lambda A, mk: A @ mk(A.shape[1]), lambda D, x: D @ x),
    "rmatvec": (lambda A, mk: A.T @ mk(A.shape[0]), lambda D, y: D.T @ y),
    "add": (lambda A, mk: A + A, lambda D: D + D),
    "mul": (lambda A, mk: A * A, lambda D: D * D),
    "sum0": (lambda A, mk: A.sum(axis=0), lambda D: D.sum(axis=0)),
    "sum1": (lambda A, mk: A.sum(axis=1), lambda D: D.sum(axis=1)),
    "sum": (lambda A, mk: ls.sum(A), lambda D: D.sum()),
    "spgemm": (lambda A, mk: A @ A.T, lambda D: D @ D.T),
    "spmm": (lambda A, mk: A @ mk(A.shape[1], 3), lambda D, X: D @ X),
    "dense": (lambda A, mk: A.asformat("dense"), lambda D: D),
    "csc": (lambda A, mk: A.asformat("csc"), lambda D: D),
}
SUBSETS = {
    "full": tuple(OPS),
    "small": ("matvec", "add", "sum0", "dense"),
}


def dense_value(x):
    """The dense value of a result, read from its storage by NumPy (no lazysparse kernel)."""
    from lazysparse.api.creation import _coords
    st = x.storage if isinstance(x, ls.Array) else None
    if st is None:
        return np.asarray(x)
    if st.format.is_dense:
        return np.asarray(st.vals)
    out = np.zeros(st.shape, st.dtype)
    np.add.at(out, tuple(_coords(st)), st.vals)
    return out


def check_ops(A, D, subset="full", fence=None, seed=0):
    """Materialize each operation of ``subset`` on ``A`` and compare with NumPy on ``D``.

    ``fence``: None, "after" or "before": dense operands are fenced buffers too.
    """
    rng = np.random.default_rng(seed)
    made = []

    def mk(*shape):
        # dense operands as kernels meet them: contiguous, reversed (negative strides, the base
        # pointer at the highest address) or a Fortran-ordered view (a transposed buffer)
        layout = seed % 3
        if layout == 2 and len(shape) == 2:
            v = rng.standard_normal(shape[::-1])
            v = (fenced(v, fence) if fence is not None else v).T
        else:
            v = rng.standard_normal(shape)
            v = fenced(v, fence) if fence is not None else v
            v = v[::-1] if layout == 1 else v
        made.append(v)
        return v

    for name in SUBSETS[subset]:
        if name == "spgemm" and A.shape[0] > 1000:
            continue  # the (m, m) oracle would not fit
        build, want = OPS[name]
        made.clear()
        out = build(A, mk)
        got = dense_value(out.materialize())
        ref = want(D, *made)
        np.testing.assert_allclose(got, ref, **TOL, err_msg=f"{name} on {A.format!r} {A.shape}")


# -- structures -------------------------------------------------------------------------------
def edge_structures(rng):
    """(shape, rows, cols, values) triples with the edges kernels get wrong: empty matrices and
    rows, the last row/column occupied or empty, one long row, stored zeros, very wide shapes."""
    out = [
        ((0, 0), [], []), ((0, 5), [], []), ((5, 0), [], []), ((4, 3), [], []),
        ((1, 1), [0], [0]), ((3, 4), [2], [3]), ((3, 4), [0], [0]),
        ((3, 5), [0] * 5, list(range(5))), ((4, 4), [3, 3, 3], [0, 1, 3]),
        ((5, 3), [0, 1, 2, 3, 4], [2, 2, 2, 2, 2]), ((2, 100_000), [0, 1, 1], [99_999, 0, 99_999]),
        ((100_000, 2), [0, 99_999], [0, 1]),
    ]
    dense = [(shape, np.array(r, np.int64), np.array(c, np.int64)) for shape, r, c in out]
    for _ in range(12):  # random, with rows left empty
        m, n = rng.integers(1, 40, size=2)
        k = int(rng.integers(0, m * n + 1))
        flat = np.sort(rng.choice(m * n, size=k, replace=False))
        dense.append(((int(m), int(n)), flat // n, flat % n))
    res = []
    for shape, r, c in dense:
        v = rng.standard_normal(len(r))
        v[::4] = 0.0  # explicit zeros are stored entries like any other
        res.append((shape, r, c, v))
    return res


def _family(shape, r, c, v, kind, idx, where):
    """An ``ls.Array`` over fenced buffers (zero-copy: asserted) and its dense value."""
    D = np.zeros(shape)
    D[r, c] = v
    if kind == "coo":
        rows, cols = fenced(r.astype(idx), where), fenced(c.astype(idx), where)
        data = fenced(v, where)
        A = ls.asarray(sp.coo_array((data, (rows, cols)), shape=shape))
        st = A.storage
        assert np.shares_memory(st.crd[1], cols) or len(v) == 0, "COO input was copied: fence lost"
        return A, D
    m = (sp.csr_array if kind == "csr" else sp.csc_array)((v, (r, c)), shape=shape)
    m.sum_duplicates()
    ptr, ind, data = (fenced(a, where) for a in (m.indptr.astype(idx), m.indices.astype(idx), m.data))
    m.indptr, m.indices, m.data = ptr, ind, data
    A = ls.asarray(m)
    assert np.shares_memory(A.storage.pos[1], ptr), f"{kind} input was copied: fence lost"
    return A, D


def _csf3(rng, where):
    """A 3-d CSF Storage built straight from fenced pos/crd arrays (validated, then used)."""
    from lazysparse.formats import Storage, resolve_format
    from lazysparse.formats.validate import validate
    shape = (3, 4, 5)
    D = np.zeros(shape)
    mask = rng.random(shape) < 0.3
    mask[1] = False  # an empty slice
    D[mask] = rng.standard_normal(int(mask.sum()))
    i, j, k = np.nonzero(D)  # C order: lexicographic (i, j, k), as CSF stores them
    crd0 = np.unique(i)
    ij = np.unique(np.stack([i, j], 1), axis=0).reshape(-1, 2)
    pos0 = [0, len(crd0)]
    pos1 = np.concatenate([[0], np.searchsorted(ij[:, 0], crd0, side="right")])
    crd1 = ij[:, 1]
    pos2 = np.concatenate([[0], np.cumsum([np.sum((i == a) & (j == b)) for a, b in ij])])
    f = lambda a: fenced(np.asarray(a, np.int64), where)
    st = Storage(shape, resolve_format("csf", 3), [f(pos0), f(pos1), f(pos2)], [f(crd0), f(crd1), f(k)],
                 fenced(D[i, j, k], where))
    validate(st, "fenced")
    return ls.Array._from_storage(st), D


def run_risky():
    """The malformed containers whose own converters are native code (see _malformed.RISKY)."""
    from _malformed import CATALOGUE, RISKY
    for name, make, _, _ in CATALOGUE:
        if name not in RISKY:
            continue
        print(f"trying {name}", flush=True)
        try:
            ls.asarray(make())
            print(f"risky\t{name}\taccepted\t", flush=True)
        except Exception as e:
            print(f"risky\t{name}\t{type(e).__name__}\t{' '.join(str(e).split())}", flush=True)


def run_cases():
    run_risky()
    rng = np.random.default_rng(20261121)
    n = 0
    plan = [("csr", np.int32, "full"), ("csr", np.int64, "small"), ("csc", np.int32, "small"),
            ("coo", np.int32, "small")]
    for where in ("after", "before"):
        for shape, r, c, v in edge_structures(rng):
            for kind, idx, subset in plan:
                print(f"case {n}: {kind} {np.dtype(idx)} {shape} nnz={len(v)} fence={where}", flush=True)
                A, D = _family(shape, r, c, v, kind, idx, where)
                if 0 in shape and subset == "full":
                    subset = "small"
                check_ops(A, D, subset, fence=where, seed=n)
                n += 1
        A, D = _csf3(rng, where)
        print(f"case {n}: csf3 fence={where}", flush=True)
        np.testing.assert_allclose(A.sum(axis=2).todense(), D.sum(axis=2), **TOL)
        np.testing.assert_allclose((A + A).todense(), D + D, **TOL)
        x = fenced(rng.standard_normal(5), where)
        np.testing.assert_allclose(ls.einsum("ijk,k->ij", A, x).todense(), D @ x, **TOL)
        n += 1
    print(f"ok {n} cases", flush=True)


def selftest():
    """A CSR whose indptr claims 4096 more entries than indices holds, kept out of asarray's
    validation: the matvec kernel must run into the fence."""
    from lazysparse.formats import Storage, resolve_format
    ind = fenced(np.array([0, 1], np.int64))
    vals = fenced(np.ones(2))
    ptr = np.array([0, 1, 2 + 4096], np.int64)
    st = Storage((2, 2), resolve_format("csr", 2), [None, ptr], [None, ind], vals, np.int64)
    A = ls.Array._from_storage(st)
    print("running", flush=True)
    (A @ np.ones(2)).materialize()
    print("no fault", flush=True)


if __name__ == "__main__":
    faulthandler.enable()
    {"cases": run_cases, "selftest": selftest}[sys.argv[1]]()
