"""``ls.concatenate``/``stack``/``hstack``/``vstack`` and their NumPy dispatch, against NumPy on
dense copies over formats, dtypes, mixed dense and sparse inputs, zero-size axes, explicit zeros
and COO duplicates."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.formats.validate import validate

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {1: ["dense", ls.Format(["compressed"]), "coo"], 2: ["dense", "csr", "csc", "coo", "dcsr"],
           3: ["dense", "csf", "coo"]}


def values(x):
    return np.asarray(x.todense())


@SETTINGS
@given(data=st.data(), nd=st.integers(1, 3), k=st.integers(1, 4), seed=st.integers(0, 2**16),
       dtypes=st.lists(st.sampled_from(["float64", "int32", "bool", "complex64"]), min_size=4, max_size=4))
def test_concatenate_and_stack_match_numpy(data, nd, k, seed, dtypes):
    rng = np.random.default_rng(seed)
    base = [data.draw(st.integers(0, 4)) for _ in range(nd)]
    axis = data.draw(st.integers(-nd, nd - 1))
    arrays, ops = [], []
    for i in range(k):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 4))
        a = (rng.integers(-2, 3, shape) * (rng.random(shape) < 0.5)).astype(dtypes[i])
        arrays.append(a)
        ops.append(ls.asarray(a, format=data.draw(st.sampled_from(FORMATS[nd]))))
    got = ls.concatenate(ops, axis=axis)
    want = np.concatenate(arrays, axis=axis)
    assert got.shape == want.shape and got.dtype == want.dtype
    if not got.format.is_dense:
        validate(got.storage, "concatenate")
        assert got.format == next(o.format for o in ops if not o.format.is_dense)
    np.testing.assert_array_equal(values(got), want)
    np.testing.assert_array_equal(values(np.concatenate(ops, axis=axis)), want)
    same = [ls.asarray(arrays[0], format=o.format) for o in ops]
    s_axis = data.draw(st.integers(-nd - 1, nd))
    np.testing.assert_array_equal(values(ls.stack(same, axis=s_axis)),
                                  np.stack([arrays[0]] * k, axis=s_axis))


def test_scipy_style_hstack_vstack():
    A = sp.random_array((5, 3), density=0.4, format="csr", rng=0)
    B = sp.random_array((5, 2), density=0.4, format="csc", rng=1)
    C = sp.random_array((2, 3), density=0.4, format="coo", rng=2)
    h = ls.hstack([ls.asarray(A), ls.asarray(B)])
    assert h.format == ls.csr
    np.testing.assert_array_equal(values(h), sp.hstack([A, B]).toarray())
    v = np.vstack([ls.asarray(A), ls.asarray(C), ls.asarray(np.arange(3.0))])
    np.testing.assert_array_equal(values(v), np.vstack([A.toarray(), C.toarray(), np.arange(3.0)]))
    np.testing.assert_array_equal(values(ls.hstack([ls.asarray(np.ones(2)), ls.asarray(np.zeros(3))])),
                                  np.r_[np.ones(2), np.zeros(3)])
    assert ls.vstack([ls.asarray(A), ls.asarray(C)], format="csc").format == ls.csc


def test_explicit_zeros_and_duplicates():
    M = sp.coo_array((np.array([1.0, 2.0, 0.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))), shape=(2, 2))
    got = ls.concatenate([ls.asarray(M), ls.asarray(M)], axis=1)
    np.testing.assert_array_equal(values(got), np.hstack([M.toarray(), M.toarray()]))


def test_lazy_inputs_are_computed():
    A = ls.asarray(sp.random_array((4, 4), density=0.5, format="csr", rng=3))
    got = ls.vstack([A * 2.0, A + A])
    np.testing.assert_allclose(values(got), np.vstack([2 * A.todense(), 2 * A.todense()]))


def test_errors():
    A, B = ls.asarray(np.ones((2, 3))), ls.asarray(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"concatenate: the input shapes must match except along axis 0"):
        ls.concatenate([A, B])
    with pytest.raises(ValueError, match=r"same number of dimensions"):
        ls.concatenate([A, ls.asarray(np.ones(3))])
    with pytest.raises(ValueError, match=r"axis 2 is out of bounds"):
        ls.concatenate([A, A], axis=2)
    with pytest.raises(ValueError, match=r"at least one array"):
        ls.concatenate([])
    with pytest.raises(ValueError, match=r"stack: all input arrays must have the same shape"):
        ls.stack([A, B])
    with pytest.raises(TypeError, match=r"expected a sequence of arrays"):
        ls.concatenate(A.storage)
    with pytest.raises(TypeError):  # NumPy's flattening axis=None is not offered: no densification
        np.concatenate([ls.asarray(sp.eye(2, format="csr")), A[:, :2]], axis=None)


@pytest.mark.parametrize("fmt,axis", [("csr", 0), ("csc", 1), ("dcsr", 0), ("dcsc", 1), ("csf", 0)])
def test_join_along_the_outermost_level_concatenates_storage(fmt, axis, monkeypatch):
    """Inputs all in one format joined along its outermost level: the stored arrays follow one
    another (no coordinates expanded); values, storage validity, index widths and unchanged
    inputs checked, with empty inputs and empty rows among them."""
    from lazysparse.api import creation, joining
    rng = np.random.default_rng(3)
    nd = 3 if fmt == "csf" else 2
    parts = []
    for n in (4, 0, 1, 5):
        shape = [3] * nd
        shape[axis] = n
        a = rng.integers(-2, 3, shape) * (rng.random(shape) < 0.4)
        if n > 1:
            a[(slice(None),) * axis + (1,)] = 0  # an empty row
        parts.append(a.astype(float))
    ops = [ls.asarray(a, format=fmt) for a in parts]
    wide = ops[1].storage  # one input with 64-bit index arrays
    wide.pos = [p if p is None else p.astype(np.int64) for p in wide.pos]
    wide.crd = [c if c is None else c.astype(np.int64) for c in wide.crd]
    wide.index_dtype = np.dtype(np.int64)
    before = [o.todense().copy() for o in ops]

    def no_coords(*a, **k):
        raise AssertionError("the storage-level join expanded coordinates")
    monkeypatch.setattr(creation, "_coords", no_coords)
    got = ls.concatenate(ops, axis=axis)
    monkeypatch.undo()
    validate(got.storage, "concatenate")
    assert got.format == ops[0].format
    np.testing.assert_array_equal(values(got), np.concatenate(parts, axis=axis))
    for o, b in zip(ops, before):
        np.testing.assert_array_equal(values(o), b)
    # a mixed-format join takes the general path and agrees
    mixed = ls.concatenate([ops[0], ls.asarray(parts[3], format="coo")], axis=axis, format=fmt)
    np.testing.assert_array_equal(values(mixed), np.concatenate([parts[0], parts[3]], axis=axis))
