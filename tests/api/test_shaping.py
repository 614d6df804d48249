"""lazysparse/api/shaping.py (``squeeze``, ``expand_dims``, ``moveaxis``, ``swapaxes``,
``matrix_transpose``, ``broadcast_to``, ``broadcast_arrays``, ``flip``, ``roll``, ``tile``,
``repeat``, ``pad``, ``diff``, ``ravel``/``flatten``) and its NumPy dispatch handlers, against NumPy
on dense copies over formats, dtypes, awkward shapes (zero-size and size-1 axes, one element,
empty rows), explicit stored zeros, COO input with duplicates, lazy inputs, negative and bad axes.
Every case checks the result's shape, dtype, values and storage, and that the input is unchanged."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.api import shaping as S
from lazysparse.array import Array
from lazysparse.api.creation import _coo_storage
from lazysparse.formats import resolve_format
from lazysparse.formats.validate import validate

SETTINGS = settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {0: ["dense"], 1: ["dense", "coo", ls.Format(["compressed"])], 2: ["dense", "csr", "csc", "coo", "dcsr"],
           3: ["dense", "csf", "coo"]}
DTYPES = ["float64", "int32", "bool", "complex64"]
DIMS = st.sampled_from([0, 1, 1, 2, 3, 4])


def values(x):
    return np.asarray(x.todense()).reshape(x.shape)


@st.composite
def operands(draw, nd=None, min_nd=0):
    """``(X, a)``: a lazysparse operand and its dense NumPy copy (the oracle)."""
    nd = draw(st.integers(min_nd, 3)) if nd is None else nd
    shape = tuple(draw(st.lists(DIMS, min_size=nd, max_size=nd)))
    dtype = draw(st.sampled_from(DTYPES))
    fmt = draw(st.sampled_from(FORMATS[nd]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    size = int(np.prod(shape))
    if fmt != "dense" and size and draw(st.booleans()):
        # COO entries with duplicates (summed) and explicit zeros, converted to the format
        k = draw(st.integers(0, 2 * size))
        flat = rng.integers(0, size, k)
        vals = rng.integers(-2, 3, k)
        vals = (vals + 1j * rng.integers(-1, 2, k) if dtype == "complex64" else vals).astype(dtype)
        coords = list(np.unravel_index(flat, shape))
        X = Array._from_storage(_coo_storage(shape, coords, vals, "test", True))
        a = np.zeros(shape, dtype)
        for c, v in zip(zip(*coords), vals):
            a[c] += v
        if fmt != "coo":
            X = ls.asarray(X, format=fmt)
    else:
        density = draw(st.sampled_from([0.0, 0.4, 1.0]))
        a = rng.integers(-3, 4, shape) * (rng.random(shape) < density)
        if dtype == "complex64":
            a = a + 1j * rng.integers(-1, 2, shape)
        a = a.astype(dtype)
        if nd >= 2 and shape[0] > 1:
            a[0] = 0  # an empty row
        X = ls.asarray(a, format=fmt)
    a = np.asarray(a)
    if draw(st.integers(0, 5)) == 0:
        X = ls.transpose(X, tuple(range(nd)))  # a lazy operand (computed by the eager functions)
        assert X.is_lazy
    return X, a


def snapshot(X):
    if X.is_lazy:
        return None
    s = X.storage
    return [None if p is None else p.copy() for p in s.pos] + \
        [None if c is None else c.copy() for c in s.crd] + [np.array(s.vals, copy=True)]


def unchanged(X, snap):
    if snap is None:
        return
    s = X.storage
    now = list(s.pos) + list(s.crd) + [s.vals]
    for p, q in zip(now, snap):
        assert (p is None) == (q is None)
        if p is not None:
            np.testing.assert_array_equal(p, q)


def check(got, want, name, fmt=None):
    """Shape, dtype, values; a sparse result is valid storage (of ``fmt`` when given)."""
    want = np.asarray(want)
    assert isinstance(got, Array), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    m = got.materialize() if got.is_lazy else got
    if not m.format.is_dense:
        validate(m.storage, name)
    if fmt is not None:
        assert m.format == fmt, (m.format, fmt)
    np.testing.assert_array_equal(values(m), want)


def compare(name, ours, theirs, X, a, *, fmt=None, lazy=None):
    """Run NumPy's ``theirs(a)``; ours must give the same result, or raise the same kind of error
    naming ``name``."""
    snap, before = snapshot(X), a.copy()
    try:
        want = theirs(a)
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)) as info:
            ours(X)
        assert name in str(info.value)
        return None
    got = ours(X)
    if lazy is not None:
        assert got.is_lazy == lazy
    check(got, want, name, fmt)
    unchanged(X, snap)
    np.testing.assert_array_equal(values(X), before)
    return got


def keeps_format(got, X):
    """An eager result's format: dense for a dense operand; a sparse operand's format when the
    rank is unchanged, else COO of the new rank."""
    if got is None or X.is_lazy or got is X or got.ndim == 0:
        return
    if X.format.is_dense:
        assert got.format.is_dense
    elif got.ndim == X.ndim:
        assert got.format == X.format, (got.format, X.format)
    else:
        assert got.format == resolve_format("coo", got.ndim), got.format


def axis_st(nd, extra=0):
    """An axis in range, or one out of range (an error)."""
    return st.integers(-nd - extra - 1, nd + extra)


# -- lazy ----------------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_squeeze_matches_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    axis = data.draw(st.one_of(st.none(), axis_st(nd),
                               st.lists(axis_st(nd), max_size=nd).map(tuple)))
    f = S.NP_FUNCTIONS[np.squeeze] if via_np else S.squeeze
    compare("squeeze", lambda x: f(x, axis=axis), lambda y: np.squeeze(y, axis=axis), X, a)
    if axis is None:
        np.testing.assert_array_equal(values(S.ARRAY_METHODS["squeeze"](X)), np.squeeze(a))


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_transposes_match_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    src = data.draw(st.one_of(axis_st(nd), st.lists(axis_st(nd), max_size=nd).map(tuple)))
    k = len(src) if isinstance(src, tuple) else 1
    dst = data.draw(st.one_of(st.lists(axis_st(nd), min_size=k, max_size=k).map(tuple),
                              st.lists(st.integers(-nd, nd - 1), max_size=nd).map(tuple) if nd else st.just(())))
    if not isinstance(src, tuple) and data.draw(st.booleans()):
        dst = dst[0] if dst else 0
    f = S.NP_FUNCTIONS[np.moveaxis] if via_np else S.moveaxis
    compare("moveaxis", lambda x: f(x, src, dst), lambda y: np.moveaxis(y, src, dst), X, a)
    a1, a2 = data.draw(axis_st(nd)), data.draw(axis_st(nd))
    f = S.NP_FUNCTIONS[np.swapaxes] if via_np else S.ARRAY_METHODS["swapaxes"]
    lazy = True if -nd <= a1 < nd and -nd <= a2 < nd and a1 % nd != a2 % nd else None
    compare("swapaxes", lambda x: f(x, a1, a2), lambda y: np.swapaxes(y, a1, a2), X, a, lazy=lazy)
    f = S.NP_FUNCTIONS[np.matrix_transpose] if via_np else S.ARRAY_PROPERTIES["mT"]
    compare("matrix_transpose", f, np.matrix_transpose, X, a, lazy=True if nd >= 2 else None)


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_diff_matches_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    n = data.draw(st.integers(-1, 3))
    axis = data.draw(axis_st(nd))
    kw = {}
    if data.draw(st.booleans()):
        kw["prepend"] = 1
    if data.draw(st.booleans()) and 0 < nd:
        shape = list(a.shape)
        shape[axis % nd] = 2
        kw["append"] = np.ones(shape, a.dtype)
    f = S.NP_FUNCTIONS[np.diff] if via_np else S.diff
    compare("diff", lambda x: f(x, n, axis, **kw), lambda y: np.diff(y, n, axis, **kw), X, a)


# -- eager: indexing and reshape -----------------------------------------------------------------
@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_expand_dims_flip_ravel_match_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    axis = data.draw(st.one_of(axis_st(nd, 1), st.lists(axis_st(nd, 2), max_size=3).map(tuple)))
    f = S.NP_FUNCTIONS[np.expand_dims] if via_np else S.expand_dims
    keeps_format(compare("expand_dims", lambda x: f(x, axis), lambda y: np.expand_dims(y, axis), X, a), X)
    axis = data.draw(st.one_of(st.none(), axis_st(nd), st.lists(axis_st(nd), max_size=nd).map(tuple)))
    f = S.NP_FUNCTIONS[np.flip] if via_np else S.flip
    keeps_format(compare("flip", lambda x: f(x, axis), lambda y: np.flip(y, axis), X, a), X)
    order = data.draw(st.sampled_from("CF"))
    f = S.NP_FUNCTIONS[np.ravel] if via_np else S.ARRAY_METHODS["ravel"]
    keeps_format(compare("ravel", lambda x: f(x, order), lambda y: np.ravel(y, order), X, a), X)
    compare("flatten", lambda x: S.ARRAY_METHODS["flatten"](x, order), lambda y: y.flatten(order), X, a)


# -- eager: storage ------------------------------------------------------------------------------
@st.composite
def broadcast_shapes(draw, shape):
    lead = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=2)))
    out = [draw(st.sampled_from([0, 1, 2, 3])) if s == 1 else s for s in shape]
    if draw(st.integers(0, 5)) == 0 and out:  # often impossible: an error
        out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(-1, 3))
    if draw(st.integers(0, 7)) == 0 and out:
        out = out[1:]  # fewer dimensions than the operand
    return lead + tuple(out)


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_broadcast_to_and_arrays_match_numpy(data, op, via_np):
    X, a = op
    shape = data.draw(broadcast_shapes(a.shape))
    f = S.NP_FUNCTIONS[np.broadcast_to] if via_np else S.broadcast_to
    keeps_format(compare("broadcast_to", lambda x: f(x, shape), lambda y: np.broadcast_to(y, shape), X, a), X)
    if shape and data.draw(st.booleans()) and tuple(shape) != a.shape:
        shape = shape[1:]
    b = np.ones(shape, "int32") if all(s >= 0 for s in shape) else np.ones(3)
    f = S.NP_FUNCTIONS[np.broadcast_arrays] if via_np else S.broadcast_arrays
    snap = snapshot(X)
    try:
        want = np.broadcast_arrays(a, b)
    except ValueError:
        with pytest.raises(ValueError, match="broadcast_arrays"):
            f(X, ls.asarray(b, format="coo" if b.ndim == 1 else "dense"))
        return
    got = f(X, ls.asarray(b, format="coo" if b.ndim == 1 else "dense"))
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        check(g, w, "broadcast_arrays")
    unchanged(X, snap)


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_roll_matches_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    sh = st.integers(-6, 6)
    kind = data.draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        shift, axis = data.draw(st.one_of(sh, st.lists(sh, max_size=3).map(tuple))), None
    elif kind == "int":
        shift, axis = data.draw(sh), data.draw(axis_st(nd))
    else:
        k = data.draw(st.integers(1, 3))
        axis = tuple(data.draw(st.lists(axis_st(nd), min_size=k, max_size=k)))
        shift = data.draw(st.one_of(sh, st.lists(sh, min_size=k, max_size=k).map(tuple)))
    f = S.NP_FUNCTIONS[np.roll] if via_np else S.roll
    keeps_format(compare("roll", lambda x: f(x, shift, axis), lambda y: np.roll(y, shift, axis), X, a), X)


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_tile_matches_numpy(data, op, via_np):
    X, a = op
    reps = data.draw(st.one_of(st.integers(-1, 3), st.lists(st.integers(0, 3), max_size=4).map(tuple)))
    f = S.NP_FUNCTIONS[np.tile] if via_np else S.tile
    if isinstance(reps, int) and reps < 0:  # NumPy lets an empty array through: refused here
        with pytest.raises(ValueError, match="tile: negative dimensions"):
            f(X, reps)
        return
    keeps_format(compare("tile", lambda x: f(x, reps), lambda y: np.tile(y, reps), X, a), X)


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_repeat_matches_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    axis = data.draw(st.one_of(st.none(), axis_st(nd)))
    n = a.size if axis is None or nd == 0 else a.shape[axis % nd] if -nd <= axis < nd else 1
    repeats = data.draw(st.one_of(st.integers(-1, 3), st.lists(st.integers(0, 3), min_size=n, max_size=n),
                                  st.lists(st.integers(0, 3), min_size=1, max_size=1),
                                  st.lists(st.integers(0, 3), min_size=n + 1, max_size=n + 1)))
    f = S.NP_FUNCTIONS[np.repeat] if via_np else S.ARRAY_METHODS["repeat"]
    if isinstance(repeats, int) and repeats < 0:  # NumPy lets an empty array through: refused here
        with pytest.raises(ValueError, match="repeat: repeats may not contain negative values"):
            f(X, repeats, axis)
        return
    keeps_format(compare("repeat", lambda x: f(x, repeats, axis), lambda y: np.repeat(y, repeats, axis), X, a), X)


@SETTINGS
@given(data=st.data(), op=operands(), via_np=st.booleans())
def test_pad_matches_numpy(data, op, via_np):
    X, a = op
    nd = a.ndim
    w = st.integers(0, 2)
    pad_width = data.draw(st.one_of(
        w, st.tuples(w, w), st.lists(st.tuples(w, w), min_size=nd, max_size=nd).map(tuple),
        st.just(-1), st.lists(st.tuples(w, w), min_size=nd + 1, max_size=nd + 1).map(tuple)))
    cv = data.draw(st.sampled_from([0, 0, 0.0, 2, (0, 1), ((0, 0),) * nd]))
    f = S.NP_FUNCTIONS[np.pad] if via_np else S.pad
    kw = {} if cv == 0 and data.draw(st.booleans()) else {"constant_values": cv}
    got = compare("pad", lambda x: f(x, pad_width, **kw), lambda y: np.pad(y, pad_width, **kw), X, a)
    if got is not None and not X.is_lazy:
        pw = np.broadcast_to(np.asarray(pad_width), (nd, 2))
        cvp = np.broadcast_to(np.asarray(kw.get("constant_values", 0)), (nd, 2))
        if X.format.is_dense or ((cvp != 0) & (pw > 0)).any():
            assert got.format.is_dense  # documented: a nonzero constant gives a dense result
        else:
            assert got.format == X.format  # zeros pad a sparse array sparsely, in its format


# -- specific cases --------------------------------------------------------------------------------
def csr():
    return ls.asarray(sp.csr_array(np.array([[0, 1.5, 0], [0, 0, 0], [2.0, 0, 3.0]])))


def test_coo_duplicates_and_explicit_zeros_from_scipy():
    M = sp.coo_array((np.array([1.0, 2.0, 0.0, 5.0]), (np.array([0, 0, 1, 2]), np.array([1, 1, 0, 2]))),
                     shape=(3, 4))
    A = ls.asarray(M)
    d = M.toarray()
    check(S.tile(A, (2, 1)), np.tile(d, (2, 1)), "tile", ls.coo)
    check(S.repeat(A, 2, axis=0), np.repeat(d, 2, axis=0), "repeat", ls.coo)
    check(S.roll(A, -1, axis=1), np.roll(d, -1, axis=1), "roll", ls.coo)
    check(S.pad(A, 1), np.pad(d, 1), "pad", ls.coo)
    check(S.broadcast_to(A, (2, 3, 4)), np.broadcast_to(d, (2, 3, 4)), "broadcast_to", ls.coo)
    check(S.diff(A, axis=0), np.diff(d, axis=0), "diff")
    check(S.flip(A, 1), np.flip(d, 1), "flip", ls.coo)


def test_lazy_routes_stay_lazy_and_eager_keep_format():
    A = csr()
    d = A.todense()
    assert S.moveaxis(A, 0, 1).is_lazy and S.swapaxes(A, 0, -1).is_lazy
    assert S.matrix_transpose(A).is_lazy and S.squeeze(A[:1]).is_lazy and S.diff(A).is_lazy
    assert S.swapaxes(A, 1, -1) is A and S.moveaxis(A, (0, 1), (0, 1)) is A  # identity: no node
    assert S.squeeze(A) is A
    assert S.flip(A).format == ls.csr and S.roll(A, 1).format == ls.csr
    assert S.tile(A, 2).format == ls.csr and S.repeat(A, 2, axis=1).format == ls.csr
    assert S.ravel(A).format == ls.Format(["compressed"]) and S.repeat(A, 2).ndim == 1
    assert S.pad(A, 1).format == ls.csr and S.pad(A, 1, constant_values=1).format.is_dense
    np.testing.assert_array_equal(values(S.pad(A, 1, constant_values=1)), np.pad(d, 1, constant_values=1))
    # a zero constant after NumPy's cast (0.5 into int32) stays sparse, as np.pad writes 0
    I = ls.asarray(sp.csr_array(np.array([[0, 1], [2, 0]], dtype=np.int32)))
    got = S.pad(I, 1, constant_values=0.5)
    assert got.format == ls.csr
    np.testing.assert_array_equal(values(got), np.pad(I.todense(), 1, constant_values=0.5))
    # a nonzero constant on an axis that is not padded does not matter
    assert S.pad(A, ((1, 0), (0, 0)), constant_values=((0, 7), (7, 7))).format == ls.csr


def test_dense_broadcast_is_a_read_only_view_and_works_as_an_operand():
    a = np.arange(3.0)
    B = S.broadcast_to(ls.asarray(a), (4, 3))
    v = np.asarray(B.todense())
    assert np.shares_memory(v, a) and not v.flags.writeable
    np.testing.assert_array_equal(values((B + 1).materialize()), np.broadcast_to(a, (4, 3)) + 1)
    np.testing.assert_array_equal(values((B @ np.ones(3)).materialize()), np.full(4, 3.0))


def test_errors_name_the_function():
    A = csr()
    with pytest.raises(np.exceptions.AxisError, match="squeeze: axis 2 is out of bounds"):
        S.squeeze(A, 2)
    with pytest.raises(ValueError, match="squeeze: cannot select an axis to squeeze out"):
        S.squeeze(A, 0)
    with pytest.raises(ValueError, match="expand_dims: repeated axis"):
        S.expand_dims(A, (0, -4))
    with pytest.raises(TypeError, match="expand_dims: axis must be an integer"):
        S.expand_dims(A, 1.0)
    with pytest.raises(ValueError, match="moveaxis: `source` and `destination`"):
        S.moveaxis(A, 0, (0, 1))
    with pytest.raises(np.exceptions.AxisError, match="swapaxes: axis 2 is out of bounds"):
        S.swapaxes(A, 0, 2)
    with pytest.raises(ValueError, match="matrix_transpose: input array must be at least 2-dimensional"):
        S.matrix_transpose(ls.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="broadcast_to: operands could not be broadcast"):
        S.broadcast_to(A, (4, 3))
    with pytest.raises(ValueError, match="broadcast_to: all elements of broadcast shape must be non-negative"):
        S.broadcast_to(A, (-1, 3))
    with pytest.raises(ValueError, match="broadcast_to: input operand has more dimensions"):
        S.broadcast_to(A, (3,))
    with pytest.raises(ValueError, match="broadcast_arrays: shape mismatch"):
        S.broadcast_arrays(A, np.ones(4))
    with pytest.raises(ValueError, match="flip: repeated axis"):
        S.flip(A, (0, 0))
    with pytest.raises(TypeError, match="roll: shift must be an integer"):
        S.roll(A, 1.5)
    with pytest.raises(ValueError, match="roll: shape mismatch"):
        S.roll(A, (1, 2), (0, 1, 1))
    with pytest.raises(ValueError, match="tile: negative dimensions"):
        S.tile(A, (1, -1))
    with pytest.raises(TypeError, match="tile: each element of reps must be an integer"):
        S.tile(A, (1.5,))
    with pytest.raises(TypeError, match="repeat: repeats must be an integer"):
        S.repeat(A, 1.5)  # stricter than NumPy, which truncates to 1
    with pytest.raises(ValueError, match="repeat: repeats may not contain negative values"):
        S.repeat(A, -1)
    with pytest.raises(ValueError, match="repeat: operands could not be broadcast"):
        S.repeat(A, [1, 2], axis=0)
    with pytest.raises(ValueError, match="pad: only mode='constant' is supported"):
        S.pad(A, 1, mode="edge")
    with pytest.raises(TypeError, match="pad: `pad_width` must be of integral type"):
        S.pad(A, 1.5)
    with pytest.raises(ValueError, match="pad: `pad_width` can't contain negative values"):
        S.pad(A, -1)
    with pytest.raises(ValueError, match="diff: order must be non-negative"):
        S.diff(A, -1)
    with pytest.raises(ValueError, match="diff: diff requires input that is at least one dimensional"):
        S.diff(ls.asarray(np.array(1.0)))
    with pytest.raises(ValueError, match="ravel: order must be 'C' or 'F'"):
        S.ravel(A, "K")


def test_numpy_handlers_decline_what_they_do_not_support():
    A = csr()
    P = S.NP_FUNCTIONS
    assert P[np.broadcast_to](A, (2, 3, 3), subok=True) is NotImplemented
    assert P[np.broadcast_arrays](A, A, subok=True) is NotImplemented
    assert P[np.pad](A, 1, mode="edge") is NotImplemented
    assert P[np.pad](A, 1, mode=lambda *a: None) is NotImplemented
    assert P[np.pad](A, 1, stat_length=2) is NotImplemented
    assert P[np.ravel](A, order="K") is NotImplemented
    with pytest.raises(TypeError):
        P[np.squeeze](A, out=None)  # an unknown keyword: NumPy's TypeError, no densification
    assert set(P) == {np.squeeze, np.expand_dims, np.moveaxis, np.swapaxes, np.matrix_transpose,
                      np.broadcast_to, np.broadcast_arrays, np.flip, np.roll, np.tile, np.repeat,
                      np.pad, np.diff, np.ravel}
    assert set(S.ARRAY_METHODS) == {"squeeze", "swapaxes", "flatten", "ravel", "repeat"}
    assert set(S.__all__) >= {"squeeze", "expand_dims", "moveaxis", "swapaxes", "matrix_transpose",
                              "broadcast_to", "broadcast_arrays", "flip", "roll", "tile", "repeat",
                              "pad", "diff", "ravel", "flatten"}


def test_through_numpy():
    A = csr()
    d = A.todense()
    np.testing.assert_array_equal(values(np.squeeze(A[:1])), np.squeeze(d[:1]))
    np.testing.assert_array_equal(values(np.tile(A, 2)), np.tile(d, 2))
    np.testing.assert_array_equal(values(np.diff(A, axis=0)), np.diff(d, axis=0))
    with pytest.raises(TypeError):
        np.pad(A, 1, mode="edge")
    np.testing.assert_array_equal(values(A.mT), d.T)
    np.testing.assert_array_equal(values(np.moveaxis(A, 0, 1)), d.T)
    np.testing.assert_array_equal(values(A.flatten()), d.reshape(-1))
    np.testing.assert_array_equal(values(np.roll(A, 10**20)), np.roll(d, 10**20))
    np.testing.assert_array_equal(values(np.roll(A, -10**20, axis=1)), np.roll(d, -10**20, axis=1))


def test_memory_guard_refuses_before_allocating(monkeypatch):
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "1M")
    A = csr()
    D = ls.asarray(np.ones((3, 3)))
    with pytest.raises(MemoryError, match="tile"):
        S.tile(A, (1000, 1000))
    with pytest.raises(MemoryError, match="tile"):
        S.tile(D, (1000, 1000))
    with pytest.raises(MemoryError, match="repeat"):
        S.repeat(A, 10**6, axis=1)
    with pytest.raises(MemoryError, match="repeat"):
        S.repeat(D, 10**6)
    with pytest.raises(MemoryError, match="broadcast_to"):
        S.broadcast_to(A, (10**6, 3, 3))
    with pytest.raises(MemoryError, match="pad"):
        S.pad(D, 10**4)
    with pytest.raises(MemoryError, match="pad"):
        S.pad(A, 10**4, constant_values=1)  # a dense result
    assert S.pad(A, 10**4).nnz == A.nnz  # zeros: sparse, nothing to refuse
    assert S.broadcast_to(D, (10**6, 3, 3)).shape == (10**6, 3, 3)  # dense: NumPy's view, no allocation
