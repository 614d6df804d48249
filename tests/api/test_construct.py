"""``ls.diags``, ``ls.kron``, ``ls.triu``, ``ls.tril`` against NumPy on dense copies."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.formats.validate import validate

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
F2 = ["dense", "csr", "csc", "coo", "dcsr", "dcsc"]


def values(x):
    return np.asarray(x.todense())


@SETTINGS
@given(n=st.integers(0, 6), m=st.integers(0, 6), data=st.data(), fmt=st.sampled_from(F2),
       dtype=st.sampled_from(["float64", "int64", "complex128"]), seed=st.integers(0, 2**16))
def test_diags(n, m, data, fmt, dtype, seed):
    rng = np.random.default_rng(seed)
    offsets = data.draw(st.lists(st.integers(-n + 1 if n else 0, m - 1 if m else 0), unique=True, max_size=4)) \
        if n and m else []
    want = np.zeros((n, m), dtype)
    diagonals = []
    for k in offsets:
        length = min(n + min(k, 0), m - max(k, 0))
        if data.draw(st.booleans()):
            d = rng.integers(-2, 3, length).astype(dtype)
        else:
            d = dtype == "int64" and 3 or 2.5
        diagonals.append(d)
        i = np.arange(length) + max(-k, 0)
        want[i, i + k] = d
    got = ls.diags(diagonals, offsets, shape=(n, m), format=fmt, dtype=dtype)
    assert got.shape == (n, m) and got.dtype == np.dtype(dtype)
    if fmt != "dense":
        validate(got.storage, "diags")
        assert got.nnz == np.count_nonzero(want)  # zeros are not stored
    np.testing.assert_array_equal(values(got), want)


def test_diags_like_scipy():
    for args, kw in [(([[1.0, 2, 3], [4.0, 5]], [0, 1]), {}), (([1.0, -2, 1], [-1, 0, 1]), {"shape": (4, 4)}),
                     (([1.0, 2, 3],), {})]:
        ref = sp.diags_array(args[0], offsets=args[1] if len(args) > 1 else 0, **kw, dtype=np.float64)
        np.testing.assert_array_equal(values(ls.diags(*args, **kw)), ref.toarray())
    np.testing.assert_array_equal(values(ls.diags(5.0, 0, shape=(3, 2))), [[5.0, 0], [0, 5.0], [0, 0]])
    with pytest.raises(ValueError, match=r"diags: diagonal at offset 0 has length 2; the 3 x 3 array's has 3"):
        ls.diags([[1, 2]], [0], shape=(3, 3))
    with pytest.raises(ValueError, match=r"repeated diagonal offsets"):
        ls.diags([[1], [2]], [0, 0], shape=(1, 1))
    with pytest.raises(ValueError, match=r"2 diagonal\(s\) but 1 offset"):
        ls.diags([[1], [2]], [0])


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_diags_in_the_corners(fmt):
    """Diagonals far shorter than the array (offsets near the corners) are sorted, not laid out
    in a table of a row per row; both ways give scipy's array (a zero stored on a diagonal is
    dropped). Three diagonals of 600k around the main one take the table."""
    n = 600_000
    got = ls.diags([[2.0], [0.0, 0.0], [3.0]], [-(n - 1), n - 2, n - 1], shape=(n, n), format=fmt, dtype="float64")
    assert got.nnz == 2 and got.format == ls.asarray(sp.eye(1, format=fmt)).format
    coo = got.to_scipy().tocoo()
    assert sorted(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist())) == [(0, n - 1, 3.0), (n - 1, 0, 2.0)]
    d = np.arange(1.0, n + 1)
    band = ls.diags([d[1:], d, -d[1:]], [1, 0, -1], format=fmt)
    ref = sp.diags_array([d[1:], d, -d[1:]], offsets=[1, 0, -1], format="csr")
    if fmt != "coo":
        validate(band.storage, "diags")
    assert (abs(band.to_scipy().tocsr() - ref)).max() == 0 and band.nnz == ref.nnz


@SETTINGS
@given(s1=st.tuples(st.integers(0, 4), st.integers(0, 4)), s2=st.tuples(st.integers(0, 3), st.integers(0, 3)),
       f1=st.sampled_from(F2), f2=st.sampled_from(F2), out=st.sampled_from([None, "csr", "csc", "coo"]),
       seed=st.integers(0, 2**16))
def test_kron(s1, s2, f1, f2, out, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, s1) * (rng.random(s1) < 0.5) * 1.0
    b = rng.integers(-2, 3, s2) * (rng.random(s2) < 0.5) * 1.0
    got = ls.kron(ls.asarray(a, format=f1), ls.asarray(b, format=f2), format=out)
    want = np.kron(a, b)
    assert got.shape == want.shape
    first = out or next((f for f in (f1, f2) if f != "dense"), "dense")
    assert got.format == ls.asarray(np.eye(2), format=first).format
    if first != "dense":
        validate(got.storage, "kron")
    np.testing.assert_array_equal(values(got), want)


def test_kron_like_scipy():
    """A larger product in CSR and CSC from operands in either order, against scipy."""
    A = sp.random_array((30, 40), density=0.2, format="csr", rng=3)
    B = sp.random_array((25, 15), density=0.3, format="csr", rng=4)
    ref = sp.kron(A, B, format="csr")
    for fa, fb, out in [("csr", "csr", None), ("csc", "csc", None), ("csr", "csc", "csc"), ("csc", "csr", "csr")]:
        got = ls.kron(ls.asarray(A.asformat(fa)), ls.asarray(B.asformat(fb)), format=out)
        assert got.format == ls.asarray(ref.asformat(out or fa)).format
        validate(got.storage, "kron")
        assert got.nnz == ref.nnz and abs(got.to_scipy().tocsr() - ref).max() == 0


@SETTINGS
@given(n=st.integers(0, 6), m=st.integers(0, 6), k=st.integers(-7, 7), fmt=st.sampled_from(F2),
       seed=st.integers(0, 2**16))
def test_triu_tril(n, m, k, fmt, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (n, m)) * (rng.random((n, m)) < 0.6) * 1.0
    A = ls.asarray(a, format=fmt)
    for fn, ref in ((ls.triu, np.triu), (ls.tril, np.tril)):
        got = fn(A, k)
        assert got.format == A.format
        if not got.format.is_dense:
            validate(got.storage, fn.__name__)
        np.testing.assert_array_equal(values(got), ref(a, k))
    np.testing.assert_array_equal(values(ls.triu(A * 2.0, k)), np.triu(2 * a, k))  # a lazy input
