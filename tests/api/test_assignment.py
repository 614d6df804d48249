"""Mutation by rebinding (``A[key] = value``, ``setdiag``, ``resize``, ``eliminate_zeros``)
against NumPy's ``D[key] = value`` on a dense copy and scipy's methods, over formats, dtypes,
index widths and awkward shapes; and what rebinding promises: the user's buffers are never
written, expressions built before a change keep the old value, nothing aliases, and a jitted
function sees the new value."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
import lazysparse.api.assignment as assignment

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = ["csr", "csc", "coo", "dense"]
DTYPES = [np.bool_, np.int64, np.float64, np.complex128]


def make(a, fmt, idt=np.int32):
    """``a`` as a lazysparse array of format ``fmt`` with ``idt`` indices (through scipy)."""
    if fmt == "dense":
        return ls.asarray(a)
    s = sp.coo_array(a) if fmt == "coo" else getattr(sp, f"{fmt}_array")(a)
    if fmt == "coo":
        s.coords = tuple(c.astype(idt) for c in s.coords)
    else:
        s.indices, s.indptr = s.indices.astype(idt), s.indptr.astype(idt)
    return ls.asarray(s)


def dense(x):
    return np.asarray(x.todense())


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape) * (rng.random(shape) < 0.5)
    return (a * (1 + 1j) if dtype == np.complex128 else a).astype(dtype)


KEYS = [(1, 2), (-1, 0), (slice(None), 1), (0, slice(1, None, 2)), ([0, 2], [1, 3]),
        (np.ix_([2, 0], [0, 3])), ([[0], [2]], [1, 2]), (slice(1, 3), [0, 2]), ([2, 1], Ellipsis),
        (Ellipsis, [3, 0, 3]), ([True, False, True], slice(None)), (slice(None), slice(None))]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idt", [np.int32, np.int64])
def test_assignment_matches_numpy(fmt, dtype, idt):
    a = sample((3, 4), dtype)
    A = make(a, fmt, idt)
    d = a.copy()
    for k, key in enumerate(KEYS):
        value = np.arange(1, 1 + np.empty((3, 4))[key].size).reshape(np.empty((3, 4))[key].shape) \
            if k % 2 else dtype(k % 3)
        A[key] = value
        d[key] = value
        np.testing.assert_array_equal(dense(A), d, err_msg=f"key {key}")
        assert A.dtype == d.dtype and A.shape == d.shape
    if fmt != "dense":
        assert A.format.name == fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_masks_values_and_duplicates(fmt):
    a = sample((4, 5), np.float64, 1)
    A, d = make(a, fmt), a.copy()
    A[a > 1] = -7.0
    d[a > 1] = -7.0
    A[ls.asarray(d) < 0] = 2.5  # a lazysparse bool array as the mask
    d[d < 0] = 2.5
    A[sp.csr_array(d == 0)] = 1  # a scipy sparse mask
    d[d == 0] = 1
    np.testing.assert_array_equal(dense(A), d)
    A[[0, 0, 0], [1, 1, 1]] = [4.0, 5.0, 6.0]  # a repeated position: the last value wins
    d[[0, 0, 0], [1, 1, 1]] = [4.0, 5.0, 6.0]
    A[1:3, 1:3] = sp.csr_array(np.array([[9.0, 0.0], [0.0, 8.0]]))  # a scipy sparse value
    d[1:3, 1:3] = [[9.0, 0.0], [0.0, 8.0]]
    A[3] = ls.asarray(np.arange(5.0))  # a lazysparse value
    d[3] = np.arange(5.0)
    A[:, 0] = 0  # zeros where entries were: removed or explicit, equal either way
    d[:, 0] = 0
    np.testing.assert_array_equal(dense(A), d)


def test_casting_is_numpys():
    A = make(np.zeros((2, 3), np.int64), "csr")
    A[0, 0] = 2.7  # unsafe, as NumPy's setitem: truncated
    A[1] = np.array([1.9, -1.9, 0.2])
    d = np.zeros((2, 3), np.int64)
    d[0, 0] = 2.7
    d[1] = np.array([1.9, -1.9, 0.2])
    np.testing.assert_array_equal(dense(A), d)
    assert A.dtype == np.int64
    B = make(np.zeros((2, 2), bool), "coo")
    B[0, 1] = 3
    assert B.dtype == bool and dense(B)[0, 1]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 5), (5, 1)])
def test_awkward_shapes(fmt, shape):
    a = sample(shape, np.float64, 2)
    A, d = make(a, fmt), a.copy()
    for key, v in [((slice(None), slice(None)), 3.0), ((Ellipsis,), 0.0), (([], []), 1.0)]:
        A[key] = v
        d[key] = v
        np.testing.assert_array_equal(dense(A), d)
    if shape[0] and shape[1]:
        A[-1, -1] = 4.0
        d[-1, -1] = 4.0
        A[[0], :] = np.arange(shape[1])
        d[[0], :] = np.arange(shape[1])
        np.testing.assert_array_equal(dense(A), d)


@st.composite
def assignments(draw):
    shape = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    kind = draw(st.sampled_from(["paired", "outer", "mask", "mixed", "basic"]))
    ints = lambda n, k: np.array(draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)), dtype=np.int64)
    k = draw(st.integers(0, 4))
    if kind == "paired":
        key = (ints(shape[0], k), ints(shape[1], k))
    elif kind == "outer":
        key = np.ix_(ints(shape[0], k), ints(shape[1], draw(st.integers(0, 3))))
    elif kind == "mask":
        key = np.array(draw(st.lists(st.booleans(), min_size=shape[0] * shape[1],
                                     max_size=shape[0] * shape[1]))).reshape(shape)
    elif kind == "mixed":
        key = (slice(draw(st.integers(-5, 5)), None, draw(st.sampled_from([1, 2, -1]))), ints(shape[1], k))
    else:
        key = (draw(st.integers(-shape[0], shape[0] - 1)), slice(None, None, draw(st.sampled_from([1, -2]))))
    scalar = draw(st.booleans())
    return shape, key, scalar, draw(st.integers(0, 9)), draw(st.sampled_from(FORMATS))


@SETTINGS
@given(assignments())
def test_assignment_property(case):
    shape, key, scalar, seed, fmt = case
    a = sample(shape, np.float64, seed)
    d = a.copy()
    sel = d[key].shape
    value = 5.0 if scalar else np.random.default_rng(seed).integers(-2, 3, sel).astype(float)
    d[key] = value
    A = make(a, fmt)
    A[key] = value
    np.testing.assert_array_equal(dense(A), d)
    np.testing.assert_array_equal(dense(A[key]), d[key])


@pytest.mark.parametrize("fmt", FORMATS)
def test_user_buffers_are_never_written(fmt):
    a = sample((3, 4), np.float64, 3)
    if fmt == "dense":
        A = ls.asarray(a)
        before = a.copy()
        A[0] = 9.0
        A.resize(2, 2)
        np.testing.assert_array_equal(a, before)
        return
    s = getattr(sp, f"{fmt}_array")(a)
    before = s.toarray(), (s.data.copy() if fmt != "coo" else s.data.copy())
    A = ls.asarray(s)
    A[:, 1] = 9.0
    A.setdiag(7.0)
    A[0, 0] = 0.0
    A.eliminate_zeros()
    np.testing.assert_array_equal(s.toarray(), before[0])
    np.testing.assert_array_equal(s.data, before[1])


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_earlier_expressions_keep_the_old_value(fmt):
    a = sample((3, 3), np.float64, 4)
    A = make(a, fmt)
    plus, prod = A + 1, A @ np.ones(3)  # lazy: they hold A itself among their nodes' children
    part = A[0:2]  # eager: a copy of the rows
    lazy = (A * 2) + A  # A twice, one level down
    A[0, 0] = 100.0
    A.setdiag(1.0, 1)
    np.testing.assert_array_equal(dense(plus), a + 1)
    np.testing.assert_allclose(dense(prod), a @ np.ones(3))
    np.testing.assert_array_equal(dense(part), a[0:2])
    np.testing.assert_array_equal(dense(lazy), 3 * a)
    now = a.copy()
    now[0, 0] = 100.0
    np.fill_diagonal(now[:, 1:], 1.0)
    np.testing.assert_array_equal(dense(A + 1), now + 1)  # new expressions see the new value


def test_a_lazy_array_is_computed_then_rebound():
    a = sample((3, 3), np.float64, 5)
    B = ls.asarray(a, format="csr")
    A = B * 2
    assert A.is_lazy
    A[1, 1] = -1.0
    assert not A.is_lazy
    d = 2 * a
    d[1, 1] = -1.0
    np.testing.assert_array_equal(dense(A), d)
    np.testing.assert_array_equal(dense(B), a)


def test_nothing_aliases():
    a = sample((3, 3), np.float64, 6)
    A = ls.asarray(a, format="csr")
    old = A.storage
    same = A
    A[2, 2] = 5.0
    assert same is A and dense(same)[2, 2] == 5.0  # the one object, rebound
    assert not np.shares_memory(A.storage.vals, old.vals)
    np.testing.assert_array_equal(np.asarray(old.vals), sp.csr_array(a).data)
    D = ls.asarray(a)
    D[0, 0] = 1.5
    assert not np.shares_memory(np.asarray(D.todense()), a)


def test_a_jitted_function_sees_the_new_value():
    a = sample((3, 3), np.float64, 7)
    A = ls.asarray(a, format="csr")
    f = ls.jit(lambda x, v: x @ v)
    v = np.arange(3.0)
    np.testing.assert_allclose(dense(f(A, v)), a @ v)
    A[0, :] = 1.0
    d = a.copy()
    d[0, :] = 1.0
    np.testing.assert_allclose(dense(f(A, v)), d @ v)
    np.testing.assert_allclose(dense(f(A, v)), d @ v)  # (a replayed trace too)


def test_a_lone_array_is_not_searched_for(monkeypatch):
    calls = []
    import gc
    real = gc.get_referrers
    monkeypatch.setattr(gc, "get_referrers", lambda *o: calls.append(1) or real(*o))
    A = ls.asarray(np.eye(3), format="csr")
    A[0, 1] = 1.0
    A.setdiag(2.0)
    A.resize(3, 3)
    A[0, 1] = 0.0
    A.eliminate_zeros()
    assert not calls and set(assignment.ALONE) == {"setitem", "setdiag", "resize", "eliminate_zeros"}
    B = A + 1
    A[0, 0] = 5.0
    assert calls and dense(B)[0, 0] == 3.0


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("k", [0, 2, -1, -2])
@pytest.mark.parametrize("values", [3.0, [1.0, 2.0], np.arange(1.0, 9.0)])
def test_setdiag_as_scipy(fmt, k, values):
    a = sample((3, 4), np.float64, 8)
    A, s = make(a, fmt), sp.csr_array(a)
    A.setdiag(values, k)
    s.setdiag(values, k)
    np.testing.assert_array_equal(dense(A), s.toarray())
    with pytest.raises(ValueError, match="setdiag: k=4 exceeds"):
        A.setdiag(1.0, 4)


@pytest.mark.parametrize("fmt", FORMATS)
def test_resize_and_eliminate_zeros_as_scipy(fmt):
    a = sample((3, 4), np.float64, 9)
    A, s = make(a, fmt), sp.csr_array(a)
    for shape in [(2, 5), (4, 2), (4, 6), (3, 4)]:
        assert A.resize(*shape) is None
        s.resize(shape)
        np.testing.assert_array_equal(dense(A), s.toarray())
    s = sp.coo_array(s)  # (scipy's COO keeps the row-major order across dimensions; its CSR row 0)
    A.resize(7)
    s.resize(7)
    assert A.shape == (7,)
    np.testing.assert_array_equal(dense(A), s.toarray())
    with pytest.raises(ValueError, match="resize: the new shape must be non-negative"):
        A.resize(-1)
    B = make(np.array([[1.0, 0.0], [2.0, 3.0]]), fmt)
    B[1, 0] = 0.0
    assert B.eliminate_zeros() is None
    if fmt != "dense":
        assert B.nnz == 2 and list(B.data) == [1.0, 3.0]
    np.testing.assert_array_equal(dense(B), [[1.0, 0.0], [0.0, 3.0]])


def test_errors_name_the_operation():
    A = make(np.zeros((3, 4)), "csr")
    with pytest.raises(IndexError, match=r"index \(3\) out of range"):
        A[3, 0] = 1.0
    with pytest.raises(ValueError, match="setitem: cannot assign a value of shape \\(5,\\)"):
        A[0, :] = np.ones(5)
    with pytest.raises(ValueError, match="setitem"):
        A[0, 0] = [1.0, 2.0]
    with pytest.raises(TypeError, match="setitem: cannot assign complex to an array of dtype float64"):
        A[0, 0] = 3j
    with pytest.raises(IndexError, match="Index dimension"):
        A["foo"] = 1.0
    np.testing.assert_array_equal(dense(A), np.zeros((3, 4)))  # a failed assignment changes nothing
