"""Vectorised calls of libm's functions (glibc's libmvec, runtime/toolchain.py ``MVEC_*``).

Kernels that call ``exp``, ``tanh``, ``pow`` ... in a loop gcc vectorises call the vector
variants when the compiler probe found them. Their results must still be NumPy's: special
values exactly (NaN, signed infinities, signed zeros), finite values to a few ulp. Lengths run
past a vector and a remainder, in dense arrays and in sparse stored values.
"""
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.runtime import kernel_cache as cache, toolchain as compiler
from lazysparse.compiler import pipeline as ex

UNARY = ["exp", "expm1", "log", "log1p", "log2", "log10", "exp2", "sin", "cos", "tan", "tanh",
         "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "cbrt"]
BINARY = ["arctan2", "hypot", "power"]
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, -0.5, 2.0, 710.0, -750.0, 90.0,
           -90.0, 1e-300, -1e-300, 5e-324, 1e308, -1e308, 1e-8, 3.0, -3.0, 100.0]
RTOL = {np.float64: 1e-13, np.float32: 2e-6}


def _values(dtype):
    with np.errstate(over="ignore"):
        specials = np.array(SPECIAL).astype(dtype)
    return st.lists(st.one_of(st.sampled_from(list(specials)),
                              st.floats(-30, 30, width=32 if dtype == np.float32 else 64)),
                    min_size=0, max_size=70).map(lambda v: np.array(v, dtype=dtype))


def _same(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf])
    zero = want == 0
    assert np.array_equal(got[zero], want[zero]) and np.array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    fin = np.isfinite(want) & ~zero
    np.testing.assert_allclose(got[fin], want[fin], rtol=RTOL[dtype], atol=0)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), op=st.sampled_from(UNARY), dtype=st.sampled_from([np.float64, np.float32]))
def test_unary_functions_of_dense_arrays_are_numpys(data, op, dtype):
    x = data.draw(_values(dtype))
    with np.errstate(all="ignore"):
        want = getattr(np, op)(x)
        got = getattr(np, op)(ls.asarray(x)).materialize().todense()
    _same(got, want, dtype)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), op=st.sampled_from(BINARY), dtype=st.sampled_from([np.float64, np.float32]))
def test_binary_functions_of_dense_arrays_are_numpys(data, op, dtype):
    x = data.draw(_values(dtype))
    y = data.draw(_values(dtype)).copy()
    y = np.resize(y, x.shape) if y.size else np.ones(x.shape, dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(x, y)
        got = getattr(np, op)(ls.asarray(x), ls.asarray(y)).materialize().todense()
    _same(got, want, dtype)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), op=st.sampled_from(["expm1", "tanh", "sin", "sinh", "arctan", "log1p", "cbrt"]),
       dtype=st.sampled_from([np.float64, np.float32]), fmt=st.sampled_from(["csr", "csc", "coo"]),
       index=st.sampled_from([np.int32, np.int64]))
def test_zero_preserving_functions_of_sparse_values_are_numpys(data, op, dtype, fmt, index):
    """Maps over the stored values (the pattern kept): every length of the values loop, and
    the stored special values; a result that is exactly zero is squeezed out, not kept."""
    vals = data.draw(_values(dtype))
    n = len(vals)
    cols = max(n, 1)
    rows = data.draw(st.integers(1, 4))
    rng = np.random.default_rng(n)
    pos = np.sort(rng.choice(rows * cols, size=n, replace=False)) if n else np.zeros(0, np.int64)
    A = sp.coo_matrix((vals, (pos // cols, pos % cols)), shape=(rows, cols)).asformat(fmt)
    for arr in ("indices", "indptr", "row", "col"):
        if hasattr(A, arr):
            setattr(A, arr, getattr(A, arr).astype(index))
    with np.errstate(all="ignore"):
        want = getattr(np, op)(A.toarray())
        r = getattr(np, op)(ls.asarray(A)).materialize()
    assert not r.format.is_dense
    _same(r.todense(), want, dtype)
    with np.errstate(all="ignore"):
        assert r.nnz == np.count_nonzero(getattr(np, op)(vals))  # (NaN counts; zeros do not)


def test_a_fused_program_calling_libm_is_numpys():
    """``exp`` and ``expm1`` inside fused loops (a softmax-like normalisation and a sum)."""
    rng = np.random.default_rng(0)
    A = sp.random(37, 53, density=0.3, format="csr", random_state=1)
    A.data = A.data * 40 - 20
    A.data[3::29] = 800.0  # (an inf in its row's sum; NaN would differ at implicit zeros by design)
    lA = ls.asarray(A)
    E = ls.expm1(lA)
    got = (E / E.sum(axis=1, keepdims=True)).materialize().todense()
    with np.errstate(all="ignore"):
        D = np.expm1(A.toarray())
        want = D / D.sum(axis=1, keepdims=True)
    _same(got, want, np.float64)
    x = rng.standard_normal(1001)
    got = float(np.exp(ls.asarray(x)).sum().materialize().todense())
    np.testing.assert_allclose(got, np.exp(x).sum(), rtol=1e-13)


def _kernel_path(expr):
    with ex.kernel_log() as log:
        expr.materialize()
    return [r.kernel.path for _, r in log if getattr(r, "kernel", None) is not None]


def test_kernels_call_the_vector_variants_where_the_probe_found_them():
    info = compiler.compiler_info(cache._probe_dir())
    if not info.mvec:
        pytest.skip("this compiler or C library has no usable libmvec: kernels call libm")
    assert "-DLS_MVEC" in info.flags and "-lmvec" in info.link_flags
    x = np.random.default_rng(0).random(1000)
    (path,) = _kernel_path(np.exp(ls.asarray(x)))
    with open(path, "rb") as f:
        blob = f.read()
    assert b"_ZGV" in blob and b"v_exp" in blob  # glibc's vector ABI names: _ZGV<isa>N<lanes>v_exp
    (path,) = _kernel_path(ls.asarray(x) * 2.0 + 1.0)
    with open(path, "rb") as f:
        assert b"_ZGV" not in f.read()


def _argv0():
    info = compiler.compiler_info(cache._probe_dir())
    return info, info.argv0


def test_the_probe_rejects_a_library_without_the_variant():
    """A declared vector variant that the library does not export links (a shared object may
    leave symbols undefined) but does not load: the probe loads what it built (RTLD_NOW)."""
    info, argv0 = _argv0()
    src = ('#include <stdint.h>\n__attribute__((simd("notinbranch"))) extern double (ls_no_such)(double);\n'
           "int32_t ls_kernel(void **p, int64_t *d) { const double *a = (const double *)p[0]; "
           "double *o = (double *)p[1]; for (int64_t i = 0; i < d[0]; i++) o[i] = ls_no_such(a[i]); return 0; }\n")
    flags = [f for f in info.flags if f not in compiler.MVEC_FLAGS]
    assert not compiler._try_compile(argv0, flags, compiler.MVEC_FLAGS, src, compiler.MVEC_LINK,
                                     compiler._mvec_runs)


def test_the_probe_rejects_wrong_values():
    info, argv0 = _argv0()
    src = "#include <stdint.h>\nint32_t ls_kernel(void **p, int64_t *d) { return 0; }\n"
    assert compiler._try_compile(argv0, list(compiler.BASE_FLAGS), (), src, compiler.LINK_FLAGS)
    assert not compiler._try_compile(argv0, list(compiler.BASE_FLAGS), (), src, compiler.LINK_FLAGS,
                                     compiler._mvec_runs)


def test_a_failed_probe_means_scalar_calls(monkeypatch):
    monkeypatch.setattr(compiler, "_try_compile", lambda argv0, flags, defines=(), *a, **k: True)
    monkeypatch.setattr(compiler, "_probe_mvec", lambda argv0, flags: False)
    assert compiler._probe(["cc"]) == (True, True, True, False)
    monkeypatch.setattr(compiler, "_probe_mvec", lambda argv0, flags: "-march=native" in flags)
    assert compiler._probe(["cc"]) == (True, True, True, True)  # (probed with the kernels' flags)


def test_the_probe_record_keeps_the_answer(tmp_path):
    path = str(tmp_path / "probe.json")
    for mvec in (True, False):
        compiler._write_probe(path, "cc 1.0", True, True, False, mvec)
        assert compiler._read_probe(path) == ("cc 1.0", True, True, False, mvec)
    with open(path, "w") as f:  # a record of the previous probe version has no answer
        f.write('{"version": "cc", "march_native": true, "openmp": true, "align_loops": true}')
    os.chmod(path, 0o600)
    assert compiler._read_probe(path) is None


def test_the_environment_can_turn_the_vector_calls_off(tmp_path):
    """``LAZYSPARSE_MVEC=0``: scalar libm calls (a new process: the compiler's identity is read
    once), in kernels of their own cache key."""
    import subprocess
    import sys
    code = ("import numpy as np, lazysparse as ls\n"
            "from lazysparse.runtime import kernel_cache as cache, toolchain as compiler\n"
            "from lazysparse.compiler import pipeline as ex\n"
            "info = compiler.compiler_info(cache._probe_dir())\n"
            "with ex.kernel_log() as log:\n"
            "    r = np.exp(ls.asarray(np.linspace(-3, 3, 999))).materialize()\n"
            "assert np.allclose(r.todense(), np.exp(np.linspace(-3, 3, 999)), rtol=1e-14, atol=0)\n"
            "blob = open(log[-1][1].kernel.path, 'rb').read()\n"
            "print(info.mvec, '-DLS_MVEC' in info.flags, b'_ZGV' in blob)\n")
    env = dict(os.environ, LAZYSPARSE_MVEC="0", LAZYSPARSE_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "False"]
