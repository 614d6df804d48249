"""Validation at the boundary.

* ``ls.asarray(..., check=True)`` rejects every malformed structure with a ValueError (TypeError for
  non-integer index arrays and unsupported value types) naming the array and the defect; the
  catalogue below covers scipy CSR/CSC/COO/BSR/LIL/DIA, pydata COO/GCXS with broken internals.
* Fuzzing: structures are built valid, then mutated. An independent predicate (plain Python,
  written from the storage contract, not from ``validate.py``) says whether the result is still a
  valid matrix; ``asarray`` must accept exactly those, and what it accepts must equal the NumPy
  matrix built from the raw triples (duplicates summed, as scipy does).
* No kernel reads outside an input that passed validation: operations on validated inputs equal
  NumPy's, in process (hypothesis) and in a subprocess where every input buffer ends (or starts)
  at an inaccessible page (``_fenced_run.py``). A self-test shows the fence does fire on a
  structure that did *not* pass validation.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sparse as pydata
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.api.creation import _from_coords
from lazysparse.formats import Storage, resolve_format
from lazysparse.formats.validate import validate

from _fenced_run import check_ops, dense_value
from _malformed import CATALOGUE, RISKY, csr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCALE = float(os.environ.get("LAZYSPARSE_HYPOTHESIS_SCALE", "1"))
ALLOWED = (ValueError, TypeError)


def examples(n):
    return settings(max_examples=max(1, int(n * SCALE)))


# -- the catalogue (_malformed.py): one malformed input per defect, through the public API -------------
SAFE = [c for c in CATALOGUE if c[0] not in RISKY]
BY_NAME = {c[0]: c for c in CATALOGUE}


@pytest.mark.parametrize("name,make,exc,match", SAFE, ids=[c[0] for c in SAFE])
def test_malformed_input_is_rejected_naming_the_defect(name, make, exc, match):
    obj = make()
    with pytest.raises(exc, match=r"^asarray: .*" + match) as info:
        ls.asarray(obj)
    assert type(info.value) in (ValueError, TypeError)


@pytest.fixture(scope="module")
def subprocess_run():
    """One interpreter for everything that could crash one: the RISKY catalogue entries, then the
    fenced kernels (``_fenced_run.py cases``)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("guard pages via mprotect (Linux)")
    return _run_fenced("cases")


@pytest.mark.parametrize("name", sorted(RISKY))
def test_malformed_input_for_native_converters_is_rejected(subprocess_run, name):
    """BSR, LIL, DIA and n-d GCXS: scipy/pydata would convert them with unchecked loops (before the
    checks in formats/foreign.py, a broken BSR indptr segfaulted inside asarray)."""
    _, _, exc, match = BY_NAME[name]
    lines = [ln.split("\t") for ln in subprocess_run.stdout.splitlines() if ln.startswith("risky\t")]
    got = {ln[1]: ln[2:] for ln in lines}
    assert name in got, f"{name} did not finish (exit status {subprocess_run.returncode}):\n" \
                        f"{(subprocess_run.stdout + subprocess_run.stderr)[-2000:]}"
    kind, msg = got[name]
    assert kind == exc.__name__, (name, kind, msg)
    assert re.match(r"^asarray: .*" + match, msg), (name, msg)


def test_validated_scipy_formats_convert_correctly():
    """The checks before scipy's own converters reject nothing valid."""
    d = np.kron(np.eye(2), np.arange(1.0, 5.0).reshape(2, 2))
    for m in (sp.bsr_array(d, blocksize=(2, 2)), sp.lil_array(d), sp.dia_array(d), sp.dok_array(d),
              pydata.GCXS.from_numpy(d.reshape(2, 2, 4), compressed_axes=(1,))):
        a = ls.asarray(m)
        want = m.todense() if isinstance(m, pydata.SparseArray) else m.toarray()
        np.testing.assert_array_equal(dense_value(a), want)


def test_unaligned_buffers_are_copied_aligned():
    """Kernels (and the C vectorizer) may assume aligned elements: misaligned user buffers are
    copied once, at the boundary; the values are unchanged."""
    raw = np.zeros(8 * 4 + 1, np.uint8)[1:]
    data = raw.view(np.float64)
    data[:] = [1.0, 2.0, 3.0, 4.0]
    rawi = np.zeros(4 * 4 + 1, np.uint8)[1:]
    ind = rawi.view(np.int32)
    ind[:] = [0, 2, 1, 3]
    m = csr(data=data, indices=ind)
    assert not m.data.flags.aligned and not m.indices.flags.aligned
    a = ls.asarray(m)
    st = a.storage
    assert st.vals.flags.aligned and st.crd[1].flags.aligned
    np.testing.assert_array_equal(dense_value(a), [[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 4]])
    # validate itself refuses a misaligned buffer handed to it directly
    bad = Storage((3, 4), resolve_format("csr", 2), [None, m.indptr.astype(np.int32)], [None, ind],
                  np.ones(4))
    with pytest.raises(ValueError, match=r"indices is not aligned"):
        validate(bad, "asarray")


# -- fuzz: malformed CSR / CSC by mutation, judged by an independent predicate -------------------------
def _py_ints(a):
    return [int(v) for v in np.asarray(a).ravel()]


def compressed_is_valid(shape, indptr, indices, data, kind):
    """The CSR/CSC contract in plain Python: what asarray must accept (after canonicalizing)."""
    if any(s < 0 for s in shape):
        return False
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu" or data.dtype.kind not in "biufc":
        return False
    if data.dtype == np.float16:  # refused rather than widened to float32
        return False
    if indptr.ndim != 1 or indices.ndim != 1 or data.ndim != 1:
        return False
    outer, inner = shape if kind == "csr" else shape[::-1]
    ptr, ind = _py_ints(indptr), _py_ints(indices)
    if len(ptr) != outer + 1 or ptr[0] != 0 or ptr[-1] != len(ind) or len(data) != len(ind):
        return False
    if any(ptr[k] > ptr[k + 1] for k in range(outer)):
        return False
    return all(0 <= c < inner for c in ind)


def dense_from_triples(shape, indptr, indices, data, kind):
    """Duplicates summed as NumPy (and scipy) sum them: bools by logical or."""
    out = np.zeros(shape, dtype=bool if data.dtype.kind == "b" else np.result_type(data.dtype, np.float64))
    ptr, ind = _py_ints(indptr), _py_ints(indices)
    outer = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    np.add.at(out, (outer, ind) if kind == "csr" else (ind, outer), data)
    return out


MUTATIONS = ("ptr_set", "ptr_first", "ptr_last", "ptr_len", "ind_set", "ind_shuffle_row", "ind_dup",
             "data_len", "ind_dtype", "ptr_dtype", "ind_2d", "shape", "data_dtype", "none")
INDEX_DTYPES = (np.int32, np.int64, np.uint8, np.uint64, np.int16, np.float64, np.bool_)
DATA_DTYPES = (np.float64, np.float32, np.int8, np.uint16, np.complex64, np.bool_, np.float16, object, "U2")


# one integer per mutation, decoded into (kind, position, small value, dtype pick): hypothesis'
# cost grows with the number of draws, and these examples are otherwise cheap
MUTATION = st.integers(0, 2**40).map(lambda v: (MUTATIONS[v % len(MUTATIONS)], (v >> 4) % 1000,
                                               (v >> 14) % 16 - 3, (v >> 18) % 100))


def _mutate(todo, shape, indptr, indices, data):
    """Apply ``todo`` (drawn ``MUTATION`` tuples): values first, dtypes last (an int8 array could
    not take the values above)."""
    ptr, ind, dat = indptr.copy(), indices.copy(), data.copy()
    for what, k, small, pick in sorted(todo, key=lambda t: t[0].endswith("dtype")):
        if what == "ptr_set" and len(ptr):
            ptr[k % len(ptr)] = small
        elif what == "ptr_first" and len(ptr):
            ptr[0] = small
        elif what == "ptr_last" and len(ptr):
            ptr[-1] = ptr[-1] + small - 4
        elif what == "ptr_len":
            ptr = ptr[:-1] if small % 2 else np.append(ptr, ptr[-1:] if len(ptr) else 0)
        elif what == "ind_set" and len(ind):
            ind[k % len(ind)] = small
        elif what == "ind_shuffle_row" and len(ind) > 1:
            ind[:2] = ind[:2][::-1]  # unsorted (maybe within a row): valid, canonicalized
        elif what == "ind_dup" and len(ind) > 1:
            ind[1] = ind[0]  # a duplicate when both sit in one row: valid, summed
        elif what == "data_len":
            dat = dat[:-1] if small % 2 else np.append(dat, 1.5)
        elif what == "ind_dtype":
            ind = ind.astype(INDEX_DTYPES[pick % len(INDEX_DTYPES)])
        elif what == "ptr_dtype":
            ptr = ptr.astype(INDEX_DTYPES[pick % len(INDEX_DTYPES)])
        elif what == "ind_2d" and len(ind) % 2 == 0 and len(ind):
            ind = ind.reshape(2, -1)
        elif what == "shape":
            shape = (max(shape[0] + small % 3 - 1, 0), shape[1] + (k % 3) - 1)
        elif what == "data_dtype" and dat.dtype.kind not in "UO":  # strings don't cast back
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dat = dat.astype(DATA_DTYPES[pick % len(DATA_DTYPES)])
    return shape, ptr, ind, dat


@st.composite
def compressed_inputs(draw):
    # few, large draws: hypothesis' per-draw cost dominates these cheap examples
    kind = draw(st.sampled_from(["csr", "csc"]))
    seed = draw(st.integers(0, 2**32 - 1))
    shape = (seed % 7, (seed >> 3) % 7)
    outer, inner = shape if kind == "csr" else shape[::-1]
    mask = np.random.default_rng(seed).random((outer, inner)) < (seed % 5) / 4
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int64)
    indices = np.nonzero(mask)[1].astype(np.int64)
    data = np.arange(1.0, len(indices) + 1)
    todo = draw(st.lists(MUTATION, min_size=1, max_size=3))
    return (kind,) + _mutate(todo, shape, indptr, indices, data)


@examples(2000)
@given(compressed_inputs())
def test_fuzz_compressed_accepts_exactly_the_valid(case):
    kind, shape, indptr, indices, data = case
    m = (sp.csr_array if kind == "csr" else sp.csc_array)((max(shape[0], 0), max(shape[1], 0)))
    m.indptr, m.indices, m.data, m._shape = indptr, indices, data, shape  # past scipy's checks
    a = _accepted_iff_valid(m, compressed_is_valid(shape, indptr, indices, data, kind), kind)
    if a is not None:
        np.testing.assert_allclose(dense_value(a), dense_from_triples(shape, indptr, indices, data, kind))


def _accepted_iff_valid(m, valid, what):
    """``ls.asarray(m)``: a ValueError/TypeError naming asarray exactly when ``m`` is malformed,
    else canonical storage (returned; None when rejected)."""
    try:
        a = ls.asarray(m)
    except ALLOWED as e:
        assert not valid, f"valid {what} input rejected: {e}"
        assert str(e).startswith("asarray: ")
        return None
    assert valid, f"malformed {what} input accepted"
    validate(a.storage, "test")  # what was accepted is canonical storage
    return a


# -- fuzz: COO (scipy and pydata) --------------------------------------------------------------------
@st.composite
def coo_inputs(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    nd = 1 + seed % 3
    shape = tuple(int(v) for v in rng.integers(0, 5, size=nd))
    nnz = int(rng.integers(0, 7))
    coords = [rng.integers(0, max(s, 1), size=nnz) for s in shape]  # valid unless shape has a 0
    data = np.arange(1.0, nnz + 1)
    todo = draw(st.lists(st.integers(0, 2**30).map(
        lambda v: (("set", "len", "dtype", "data", "none")[v % 5], (v >> 3) % 100, (v >> 10) % 8 - 2)),
        max_size=2))
    for what, k, v in sorted(todo, key=lambda t: t[0] == "dtype"):  # dtypes last
        c = coords[k % nd]
        if what == "set" and len(c):
            c[k % len(c)] = v
        elif what == "len":
            coords[k % nd] = c[:-1]
        elif what == "dtype":
            coords[k % nd] = c.astype(INDEX_DTYPES[k % len(INDEX_DTYPES)])
        elif what == "data":
            data = data[:-1] if v % 2 else np.append(data, 2.0)
    lib = ("scipy", "pydata")[(seed >> 5) % 2] if nd >= 2 else "pydata"
    return lib, shape, coords, data


def coo_is_valid(shape, coords, data):
    if any(c.dtype.kind not in "iu" for c in coords):
        return False
    n = len(data)
    return all(len(c) == n and all(0 <= v < s for v in _py_ints(c)) for c, s in zip(coords, shape))


@examples(1500)
@given(coo_inputs())
def test_fuzz_coo_accepts_exactly_the_valid(case):
    lib, shape, coords, data = case
    if lib == "scipy":
        m = sp.coo_array(np.zeros(shape))
        m.coords, m.data = tuple(coords), data
    else:
        m = pydata.COO(np.zeros((len(shape), 0), np.int64), np.zeros(0), shape=shape)
        try:
            m.coords = np.stack(coords)
        except ValueError:  # ragged: pydata cannot even hold it
            return
        m.data = data
        coords = list(m.coords)  # one array: int64 stacked with uint64 is float64
    a = _accepted_iff_valid(m, coo_is_valid(shape, coords, data), "COO")
    if a is None:
        return
    want = np.zeros(shape)
    np.add.at(want, tuple(c.astype(np.int64) for c in coords), data)
    np.testing.assert_allclose(dense_value(a), want)


# -- fuzz: BSR / GCXS, whose own converters must never see a malformed structure ---------------------
@st.composite
def blocked_inputs(draw):
    lib = draw(st.sampled_from(["bsr", "gcxs3", "gcxs2"]))
    seed = draw(st.integers(0, 2**16))
    d = np.random.default_rng(seed).random((4, 4)) < 0.4
    if lib == "bsr":
        m = sp.bsr_array(np.kron(d[:2, :2], np.ones((2, 2))), blocksize=(2, 2))
        m.sort_indices()
    elif lib == "gcxs3":
        m = pydata.GCXS.from_numpy(d.reshape(2, 2, 4).astype(float), compressed_axes=(draw(st.integers(0, 2)),))
    else:
        m = pydata.GCXS.from_numpy(d.astype(float), compressed_axes=(draw(st.integers(0, 1)),))
    ptr, ind = np.array(m.indptr, np.int64), np.array(m.indices, np.int64)
    for what in draw(st.lists(st.sampled_from(["ptr", "ind", "end", "none"]), max_size=2)):
        k, v = draw(st.integers(0, 100)), draw(st.integers(-3, 9))
        if what == "ptr":
            ptr[k % len(ptr)] = v
        elif what == "ind" and len(ind):
            ind[k % len(ind)] = v
        elif what == "end":
            ptr[-1] += v - 3
    m.indptr, m.indices = ptr, ind
    return lib, m


def _compressed_view_is_valid(lib, m):
    if lib == "bsr":
        rows, cols = m.shape[0] // 2, m.shape[1] // 2
    elif lib == "gcxs3":
        ax = m.compressed_axes[0]
        rows = m.shape[ax]
        cols = int(np.prod(m.shape)) // rows
    else:
        rows, cols = m.shape if m.compressed_axes == (0,) else m.shape[::-1]
    n = len(m.data)
    return compressed_is_valid((rows, cols), m.indptr, m.indices, np.zeros(n), "csr") and len(m.indices) == n


@examples(500)
@given(blocked_inputs())
def test_fuzz_bsr_gcxs_never_reach_unchecked_converters(case):
    lib, m = case
    valid = _compressed_view_is_valid(lib, m)
    try:
        a = ls.asarray(m)
    except ALLOWED as e:
        assert not valid, f"valid {lib} input rejected: {e}"
        return
    assert valid, f"malformed {lib} input accepted"
    want = m.toarray() if lib == "bsr" else m.todense()
    np.testing.assert_allclose(dense_value(a) if a.ndim == 2 else _nd_value(a), want)


def _nd_value(a):
    from lazysparse.api.creation import _coords
    st_ = a.storage
    out = np.zeros(st_.shape)
    np.add.at(out, tuple(_coords(st_)), st_.vals)
    return out


# -- fuzz: CSF / COO storage straight into validate, judged by a bounds-checked walker ---------------
def walk(st_):
    """Visit every stored entry the way a kernel's level iterators do, in plain Python, with an
    explicit bounds check at every read; False at the first read outside an array or a violated
    property (ordered/unique within each segment, pos[0] = 0, every entry owned by a parent)."""
    fmt = st_.format
    parents = [()]  # coordinate prefixes of the current level's positions
    for l, lv in enumerate(fmt.levels):
        n = st_.shape[fmt.order[l]]
        crd = None if lv.kind == "dense" else _py_ints(st_.crd[l])
        if lv.kind == "compressed":
            pos = _py_ints(st_.pos[l])
            if len(pos) != len(parents) + 1 or pos[0] != 0 or pos[-1] != len(crd):
                return False
        nxt = []
        for p, prefix in enumerate(parents):
            if lv.kind == "dense":
                seg = list(range(n))
            elif lv.kind == "compressed":
                lo, hi = pos[p], pos[p + 1]
                if not 0 <= lo <= hi <= len(crd):
                    return False
                seg = crd[lo:hi]
            else:
                if p >= len(crd):
                    return False
                seg = [crd[p]]
            if any(not 0 <= c < n for c in seg):
                return False
            if lv.kind == "compressed" and any(b <= a for a, b in zip(seg, seg[1:])):
                return False
            nxt.extend(prefix + (c,) for c in seg)
        if lv.kind == "singleton" and len(crd) != len(parents):
            return False
        parents = nxt
    return st_.vals.ndim == 1 and len(st_.vals) == len(parents)


@examples(600)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), seed=st.integers(0, 2**16),
       fmt=st.sampled_from(["csf", "dcsr", "csr"]), noise=st.lists(st.tuples(st.integers(0, 5), st.integers(-2, 5)),
                                                                  max_size=3), dt=st.sampled_from([np.int32, np.int64]))
def test_fuzz_csf_storage_validate_agrees_with_walker(shape, seed, fmt, noise, dt):
    nd = len(shape)
    if fmt != "csf" and nd != 2:
        fmt = "csf"
    f = resolve_format(fmt, nd)
    d = np.random.default_rng(seed).random(shape) < 0.5
    good = _from_coords(tuple(shape), f, list(np.nonzero(d)), np.arange(1.0, d.sum() + 1))  # valid
    arrays = [a.astype(dt) if a is not None else None for a in good.pos] + \
             [a.astype(dt) if a is not None else None for a in good.crd]
    present = [k for k, a in enumerate(arrays) if a is not None and len(a)]
    for which, v in noise:
        if present:
            a = arrays[present[which % len(present)]]
            a[(which * 7 + v) % len(a)] = v
    st_ = Storage(good.shape, f, arrays[:nd], arrays[nd:], good.vals.copy(), np.dtype(dt))
    ok = walk(st_)
    try:
        validate(st_, "asarray")
    except ALLOWED as e:
        assert not ok, f"valid storage rejected: {e}"
        return
    assert ok, "storage a kernel would read out of bounds (or in the wrong order) passed validation"


# -- validated inputs: kernels compute NumPy's values --------------------------------------------
@st.composite
def valid_matrices(draw):
    kind, idx, subset = draw(st.sampled_from([("csr", np.int32, "full"), ("csr", np.int64, "small"),
                                              ("csc", np.int32, "small"), ("coo", np.int32, "small")]))
    shape = (draw(st.integers(0, 9)), draw(st.integers(0, 9)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < (seed % 5) / 4  # empty, sparse, ..., full
    D = np.zeros(shape)
    D[mask] = rng.standard_normal(int(mask.sum())).round(3)
    r, c = np.nonzero(mask)
    v = D[r, c]
    if draw(st.booleans()) and len(v) > 1:  # unsorted, with a duplicate: canonicalized on a copy
        o = rng.permutation(len(v))
        r, c, v = np.append(r[o], r[o[0]]), np.append(c[o], c[o[0]]), np.append(v[o], 0.5)
        D[r[-1], c[-1]] += 0.5
    m = sp.coo_array((v, (r.astype(idx), c.astype(idx))), shape=shape)
    if kind != "coo":
        # scipy's converters would sum duplicates; keep them by building the arrays directly
        outer, inner = (r, c) if kind == "csr" else (c, r)
        o = np.argsort(outer, kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(outer, minlength=shape[0 if kind == "csr" else 1]))])
        m = (sp.csr_array if kind == "csr" else sp.csc_array)(shape)
        m.indptr, m.indices, m.data = ptr.astype(idx), inner[o].astype(idx), v[o]
    if 0 in shape:
        subset = "small"
    return ls.asarray(m), D, subset, seed


@examples(40)
@given(valid_matrices())
def test_validated_inputs_compute_numpys_values(case):
    A, D, subset, seed = case
    check_ops(A, D, subset, seed=seed)


def _run_fenced(mode, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, os.path.join(HERE, "_fenced_run.py"), mode], capture_output=True,
                          text=True, env=env, timeout=timeout, cwd=ROOT)


def test_no_kernel_reads_outside_validated_inputs(subprocess_run):
    """Every input buffer ends (then starts) at a PROT_NONE page: one stray read is a SIGSEGV."""
    proc = subprocess_run
    tail = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, f"fenced run failed (exit status {proc.returncode}):\n{tail}"
    assert "ok " in proc.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="guard pages via mprotect (Linux)")
def test_fence_fires_on_a_structure_that_skipped_validation():
    """The harness above can fail: a CSR whose indptr overruns its indices, kept from validation,
    makes the matvec kernel read past the end of ``indices`` into the guard page."""
    proc = _run_fenced("selftest", timeout=120)
    assert "running" in proc.stdout
    assert proc.returncode == -signal.SIGSEGV, (proc.returncode, proc.stdout[-500:], proc.stderr[-1500:])
