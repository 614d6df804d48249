"""Inputs are never mutated; results never share buffers with inputs.

What API.md allows to share: ``asarray`` of CSR/CSC/dense input is zero-copy (canonical COO is
too), ``to_scipy``/``todense`` of such an array hand its buffers back, and views in the NumPy /
scipy sense: ``.T``/``transpose``/``einsum`` relabellings (``A.T`` of a CSR array is a CSC array
over the same buffers, as in scipy) and a conversion to the format an array already has (scipy's
``tocsr(copy=False)``). Every other result owns its buffers.

"Not mutated" covers everything an input is made of: data, int32/int64 index arrays, NaN bit
patterns, and the attributes of the scipy / pydata object (``has_sorted_indices`` and
``has_canonical_format`` flags included, whether set or not). Inputs are made read-only first, so
no code path may even ask for a writable buffer; one test puts them on read-only pages, where a
kernel's store would crash (it runs in a subprocess), and one checks that every generated kernel
takes its inputs through ``const`` pointers, so that a store into an input does not compile.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
import sparse as pydata

import lazysparse as ls
from lazysparse.compiler.fused_pipeline import FusedRun
from lazysparse.compiler.pipeline import kernel_log

SHAPE = (6, 5)


def base_matrix():
    rng = np.random.default_rng(3)
    D = np.where(rng.random(SHAPE) < 0.5, rng.standard_normal(SHAPE), 0.0)
    D[0, 0], D[2, 3] = np.nan, -np.inf  # bit patterns must survive too
    D[1, 1] = 0.75
    return D


def arrays_of(obj):
    """The NumPy buffers an input object is made of."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, ls.Array):
        st = obj.storage
        return [a for a in st.pos + st.crd + [st.vals] if a is not None]
    out = []
    for v in vars(obj).values():
        if isinstance(v, np.ndarray):
            out.append(v)
        elif isinstance(v, tuple) and all(isinstance(a, np.ndarray) for a in v):  # scipy coo.coords
            out.extend(v)
    return out


def freeze(obj):
    for a in arrays_of(obj):
        a.flags.writeable = False


def snapshot(obj):
    """Everything observable about an input: attribute values, array identity, dtype, shape,
    strides and bytes (NaN payloads included)."""
    def arr(a):
        return ("array", id(a), a.dtype.str, a.shape, a.strides, a.flags.writeable, a.tobytes())

    if isinstance(obj, np.ndarray):
        return arr(obj)
    if isinstance(obj, ls.Array):
        return [arr(a) for a in arrays_of(obj)]
    snap = {}
    for k, v in vars(obj).items():
        if k == "_cache":
            continue  # pydata's lazily filled cache of derived objects
        if isinstance(v, np.ndarray):
            snap[k] = arr(v)
        elif isinstance(v, tuple) and v and all(isinstance(a, np.ndarray) for a in v):
            snap[k] = tuple(arr(a) for a in v)
        else:
            snap[k] = repr(v)
    return snap


def make_input(kind):
    """(the user's object, the ls.Array over it, its dense value)."""
    D = base_matrix()
    if kind in ("csr32", "csr64", "csc32"):
        S = sp.csr_array(D) if kind != "csc32" else sp.csc_array(D)
        w = np.int64 if kind == "csr64" else np.int32
        obj = type(S)((S.data, S.indices.astype(w), S.indptr.astype(w)), shape=S.shape)
        obj.has_sorted_indices = True  # flags set ...
    elif kind == "csr_matrix":
        obj = sp.csr_matrix(D)  # ... or never computed
    elif kind == "csr_unsorted":
        S = sp.csr_array(D)
        idx, data = S.indices.copy(), S.data.copy()
        for r in range(S.shape[0]):  # reverse every row
            a, b = S.indptr[r], S.indptr[r + 1]
            idx[a:b], data[a:b] = idx[a:b][::-1].copy(), data[a:b][::-1].copy()
        obj = sp.csr_array((data, idx, S.indptr.copy()), shape=S.shape)
        obj.has_sorted_indices = False
    elif kind == "coo_duplicates":
        r, c = np.nonzero(D)
        vals = D[r, c]
        # every entry split in two halves, unsorted: asarray sums them on a copy
        r2, c2 = np.concatenate([r, r])[::-1], np.concatenate([c, c])[::-1]
        v2 = np.concatenate([vals / 2, vals / 2])[::-1]
        obj = sp.coo_array((v2, (r2.astype(np.int32), c2.astype(np.int32))), shape=SHAPE)
    elif kind == "dense_c":
        obj = D.copy()
    elif kind == "dense_f":
        obj = np.asfortranarray(D)
    elif kind == "dense_reversed":  # negative strides, addressed in place
        obj = D[::-1, ::-1].copy()[::-1, ::-1]
    elif kind == "dense_broadcast":  # zero strides (NumPy makes it read-only)
        obj = np.broadcast_to(D[1], SHAPE)
        D = np.array(obj)
    elif kind == "pydata_coo":
        obj = pydata.COO.from_numpy(D)
    elif kind == "gcxs":
        obj = pydata.GCXS.from_numpy(D, compressed_axes=(0,))
    elif kind == "computed":  # the result of an earlier kernel (C-allocated buffers)
        obj = (ls.asarray(sp.csr_array(D)) * 1.0).materialize()
        assert obj.format == ls.csr
    else:
        raise AssertionError(kind)
    freeze(obj)
    A = obj if isinstance(obj, ls.Array) else ls.asarray(obj)
    return obj, A, D


def partner():
    rng = np.random.default_rng(4)
    P = np.where(rng.random(SHAPE) < 0.5, rng.standard_normal(SHAPE), 0.0)
    return sp.csr_array(P), P


# results of these operations are views of their operand (documented above)
VIEW_OPS = {"T", "transpose", "einsum ij->ji", "same format"}


def battery(A, Pl, x, tier):
    """name -> lazy or concrete result; tier 0: a few operations (other input kinds of the same
    storage), 1: one of each kernel family, 2: everything."""
    ops = {"A + P": lambda: A + Pl, "A * 2": lambda: A * 2, "T": lambda: A.T,
           "same format": lambda: A.asformat(A.format)}
    if tier >= 1:
        ops.update({"A @ x": lambda: A @ x, "sum(axis=0)": lambda: A.sum(axis=0)})
    if tier >= 2:  # one operation per kernel family
        ops.update({
            "asformat": lambda: A.asformat("dcsr" if A.format.is_dense else "dense"),
            "A * P": lambda: A * Pl,
            "A @ P.T": lambda: A @ Pl.T,
            "sum(axis=1)": lambda: A.sum(axis=1),
            "max(axis=1)": lambda: A.max(axis=1),
            "einsum ij,ij->i": lambda: ls.einsum("ij,ij->i", A, Pl),
            "einsum ij->ji": lambda: ls.einsum("ij->ji", A),
            "transpose": lambda: ls.transpose(A),
            "where": lambda: ls.where(A > 0.5, A, 0.0),
            "exp": lambda: np.exp(A),
            "astype same": lambda: A.astype(A.dtype),
            "tocsc": lambda: A.tocsc(),
        })
    return {name: f() for name, f in ops.items()}


def check_no_alias(name, r, inputs):
    st = r.storage
    bufs = [a for a in st.pos + st.crd + [st.vals] if a is not None]
    for b in bufs:
        for a in inputs:
            assert not np.shares_memory(b, a), f"the result of {name} shares a buffer with an input"


TIERS = {"csr32": 2, "dense_c": 2, "csr64": 1, "csc32": 1, "coo_duplicates": 1, "dense_f": 1,
         "computed": 0, "csr_matrix": 0, "csr_unsorted": 0, "pydata_coo": 0, "gcxs": 0, "dense_reversed": 0,
         "dense_broadcast": 0}


def dense_of(x):
    """Dense values; csr/csc/coo through scipy (no conversion kernel to compile)."""
    if x.ndim == 2 and x.format.name in ("csr", "csc", "coo"):
        return x.to_scipy().toarray()
    return x.todense()


@pytest.mark.parametrize("kind", list(TIERS))
def test_inputs_untouched_results_own_their_buffers(kind):
    obj, A, D = make_input(kind)
    Ps, Pd = partner()
    freeze(Ps)
    x = np.linspace(-1, 1, SHAPE[1])
    freeze(x)
    before = [snapshot(o) for o in (obj, Ps, x)]
    Pl = ls.asarray(Ps)
    inputs = arrays_of(obj) + arrays_of(Ps) + [x]
    results = battery(A, Pl, x, TIERS[kind])
    computed = ls.compute(*results.values())  # one plan for all of them
    for (name, lazy), r in zip(results.items(), computed):
        r = r.materialize()
        if name not in VIEW_OPS:
            check_no_alias(name, r, inputs)
        # and the values: the oracle is NumPy on the dense copy
        want = {"A + P": lambda: D + Pd, "A * 2": lambda: D * 2, "A @ x": lambda: D @ x,
                "sum(axis=0)": lambda: D.sum(axis=0), "T": lambda: D.T}.get(name)
        if want is not None:
            np.testing.assert_allclose(dense_of(r), want(), rtol=1e-12, equal_nan=True)
    # results handed back to scipy / NumPy do not lead to the inputs either
    for name in ("A * 2", "A + P"):
        r = results[name]
        out = r.to_scipy() if not r.format.is_dense else r.todense()
        for a in arrays_of(out) if sp.issparse(out) else [out]:
            assert not any(np.shares_memory(a, b) for b in inputs), name
    after = [snapshot(o) for o in (obj, Ps, x)]
    for b, a, what in zip(before, after, ("input", "partner", "vector")):
        assert a == b, f"{kind}: the {what} changed"


def test_scipy_flags_are_not_set_or_cleared():
    """asarray reads scipy's buffers, never its lazily computed flags (reading the property
    ``has_sorted_indices`` would store it on the object)."""
    S = sp.csr_array(base_matrix())
    assert "_has_sorted_indices" not in vars(S)
    A = ls.asarray(S)
    (A * 2 + A).todense()
    assert "_has_sorted_indices" not in vars(S) and "_has_canonical_format" not in vars(S)
    C = sp.coo_array(base_matrix())
    C.has_canonical_format = False  # a promise not to rely on: canonicalised on a copy
    ls.asarray(C).sum(axis=0).todense()
    assert C.has_canonical_format is False


def test_kernels_take_inputs_through_const_pointers():
    """Every input slot of every generated kernel is read through a ``const T *`` (a store into
    it would not compile), and nothing else uses that slot."""
    obj, A, D = make_input("csr32")
    obj2, A2, _ = make_input("dense_c")
    Pl = ls.asarray(partner()[0])
    x = np.linspace(-1, 1, SHAPE[1])
    with kernel_log() as log:
        for arr in (A, A2):
            for r in battery(arr, Pl, x, 2).values():
                r.materialize()
    assert len(log) >= 20
    for entry in log:  # per-operation kernels (spec, runner) and fused ones (FusedRun)
        src, abi = (entry.kernel.source, entry.abi) if isinstance(entry, FusedRun) else \
            (entry[1].source, entry[1].abi)
        for k, desc in enumerate(abi.p):
            uses = re.findall(rf"(.{{0,40}})\bp\[{k}\]", src)
            if desc[0] == "in":
                assert uses, (k, desc)
                for u in uses:
                    assert re.search(r"\(const [\w ]+\*\)$", u), f"input slot p[{k}] used as {u!r}p[{k}]"
                # and the pointer it initialises is itself const: a cast to const assigned to a
                # plain ``T *`` only warns, and a store through that pointer would compile
                for line in (ln.strip() for ln in src.splitlines() if re.search(rf"\bp\[{k}\]", ln)):
                    assert re.fullmatch(rf"const ([\w ]+?) (\*restrict \w+ = \(const \1 \*\)|\w+ = \*\(const \1 \*\))"
                                        rf"p\[{k}\];", line), f"input slot p[{k}] declared as {line!r}"


READONLY_SCRIPT = r"""
import os, sys
import numpy as np, scipy.sparse as sp
import lazysparse as ls

d = sys.argv[1]
rng = np.random.default_rng(5)
D = np.where(rng.random((40, 30)) < 0.3, rng.standard_normal((40, 30)), 0.0)
S = sp.csr_array(D)
for name, a in (("data", S.data), ("indices", S.indices.astype(np.int32)),
                ("indptr", S.indptr.astype(np.int32)), ("dense", D)):
    a.tofile(os.path.join(d, name))
def ro(name, dtype, shape=None):
    m = np.memmap(os.path.join(d, name), dtype=dtype, mode="r")  # PROT_READ pages
    return m if shape is None else m.reshape(shape)
data, indices, indptr = ro("data", np.float64), ro("indices", np.int32), ro("indptr", np.int32)
dense = ro("dense", np.float64, D.shape)
M = sp.csr_array((data, indices, indptr), shape=D.shape)
A, B = ls.asarray(M), ls.asarray(dense)
assert np.shares_memory(A.storage.vals, data) and np.shares_memory(B.storage.vals, dense)
x = np.linspace(0, 1, 30)
outs = ls.compute(A + A, B + A, A * A, A * 2, B * 2, A @ x, B @ x, A @ A.T, A.sum(axis=0), B.sum(axis=1),
                  np.exp(A), A.tocsc(), B.asformat("dcsr"), ls.where(A > 0.5, A, 0.0))
want = [D + D, D + D, D * D, D * 2, D * 2, D @ x, D @ x, D @ D.T, D.sum(axis=0), D.sum(axis=1), np.exp(D),
        D, D, np.where(D > 0.5, D, 0.0)]
for o, w in zip(outs, want):
    np.testing.assert_allclose(o.todense(), w, rtol=1e-12)
print("ok")
"""


def test_inputs_on_read_only_pages(tmp_path):
    """A kernel that stored into an input would die of SIGSEGV here (so it runs in a subprocess;
    its kernels come from the session's disk cache when they were built already)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(ls.__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", READONLY_SCRIPT, str(tmp_path)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (
        f"exit status {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")


def test_fused_result_in_an_input_pattern_owns_its_buffers():
    """A fused kernel whose result has an input's pattern (SDDMM: ``B * (U @ V.T)``) gets new
    position and coordinate arrays (compiler/fused_pipeline.py, the ``like`` glue), equal to B's but not B's."""
    from lazysparse.compiler.fused_pipeline import FusedRun
    S = sp.random_array((40, 30), density=0.2, format="csr", rng=4)
    rng = np.random.default_rng(4)
    U, V = rng.random((40, 3)), rng.random((30, 3))
    for o in (S, U, V):
        freeze(o)
    before = [snapshot(o) for o in (S, U, V)]
    B = ls.asarray(S)
    with kernel_log() as log:
        r = (B * (ls.asarray(U) @ ls.asarray(V).T)).materialize()
    assert any(isinstance(e, FusedRun) for e in log), "not fused: the test misses the fused glue"
    assert r.format == B.format
    check_no_alias("B * (U @ V.T)", r, arrays_of(S) + [U, V])
    np.testing.assert_allclose(r.to_scipy().toarray(), S.toarray() * (U @ V.T), rtol=1e-12)
    assert [snapshot(o) for o in (S, U, V)] == before


@pytest.mark.parametrize("kind", ["csr", "coo", "dense"])
def test_asarray_copy_owns_its_buffers(kind):
    """API.md: ``asarray(..., copy=True)`` copies; without it CSR/dense (and canonical COO) are shared."""
    D = np.where(base_matrix() != 0, base_matrix(), 0.0)
    obj = {"csr": lambda: sp.csr_array(D), "coo": lambda: sp.coo_array(D), "dense": lambda: D.copy()}[kind]()
    freeze(obj)
    before = snapshot(obj)
    shared = ls.asarray(obj)
    assert any(np.shares_memory(a, b) for a in arrays_of(shared) for b in arrays_of(obj))
    own = ls.asarray(obj, copy=True)
    for a in arrays_of(own):
        assert not any(np.shares_memory(a, b) for b in arrays_of(obj)), kind
    np.testing.assert_array_equal(own.todense(), D)
    assert snapshot(obj) == before
