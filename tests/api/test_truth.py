"""``ls.any``/``ls.all`` (and the methods, and ``np.any``/``np.all``) against NumPy over formats,
dtypes, NaN, explicit zeros and zero-size axes."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls

FORMATS = {1: ["dense", ls.Format(["compressed"]), "coo"], 2: ["dense", "csr", "csc", "coo", "dcsr"],
           3: ["dense", "csf", "coo"]}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), nd=st.integers(1, 3), density=st.sampled_from([0.0, 0.3, 1.0]),
       dtype=st.sampled_from(["float64", "int32", "bool", "complex128"]), keepdims=st.booleans(),
       seed=st.integers(0, 2**16))
def test_any_all_match_numpy(data, nd, density, dtype, keepdims, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=nd, max_size=nd)))
    a = (rng.integers(-1, 2, shape) * (rng.random(shape) < density)).astype(dtype)
    if dtype == "float64" and a.size:
        a.flat[rng.integers(a.size)] = np.nan  # NaN is nonzero
    A = ls.asarray(a, format=data.draw(st.sampled_from(FORMATS[nd])))
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                               st.lists(st.integers(0, nd - 1), unique=True).map(tuple)))
    for got, want in ((A.any(axis, keepdims), a.any(axis, keepdims=keepdims)),
                      (ls.all(A, axis, keepdims), a.all(axis, keepdims=keepdims)),
                      (np.any(A, axis=axis, keepdims=keepdims), np.any(a, axis=axis, keepdims=keepdims))):
        assert got.shape == np.shape(want) and got.dtype == np.bool_
        # (a concrete operand's full reduction is a NumPy scalar, as NumPy's)
        np.testing.assert_array_equal(np.asarray(getattr(got, "todense", lambda: got)()), want)
