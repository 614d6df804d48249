"""The precompiled <immintrin.h> (runtime/pch.py): used from a process's second vector kernel,
only for sources that include the header under a test these flags pass, and kernels built with
it compute what NumPy does."""
from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.runtime import pch, toolchain

WS = "#if defined(__AVX2__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif\nint f(void) { return 1; }\n"


@pytest.fixture
def fresh(monkeypatch):
    for name in ("_wanted", "_built"):
        monkeypatch.setattr(pch, name, {})
    info = toolchain.compiler_info()
    if "__AVX2__" not in pch._predefined(info, (info.identity, info.flags)):
        pytest.skip("the compiler targets no AVX2 here: the workspaces include no intrinsics header")
    return info


def test_second_vector_source_pre_includes_the_built_header(fresh):
    assert pch.include_args(fresh, "int f(void) { return 1; }\n") == []
    assert pch.include_args(fresh, WS) == []  # the first: the header as text
    args = pch.include_args(fresh, WS)
    assert args[0] == "-include" and os.path.exists(args[1] + ".gch")
    assert pch.include_args(fresh, WS) == args  # built once


def test_a_skipped_include_is_not_pre_included(fresh):
    only512 = WS.replace("defined(__AVX2__) || ", "")
    macros = pch._predefined(fresh, (fresh.identity, fresh.flags))
    for _ in range(3):
        got = pch.include_args(fresh, only512)
    assert (got != []) == ("__AVX512F__" in macros)


def test_a_source_compiled_with_it_runs(fresh, tmp_path):
    """Compiled with the pre-included header, a source that uses an intrinsic builds and runs."""
    src = WS.replace("int f(void) { return 1; }", (
        "int64_t f(void) { __m256d a = _mm256_set1_pd(1.5), b = _mm256_add_pd(a, a);\n"
        "  double out[4]; _mm256_storeu_pd(out, b); return (int64_t)(out[0] + out[3]); }"))
    src = "#include <stdint.h>\n" + src
    path = tmp_path / "k.c"
    path.write_text(src)
    pch.include_args(fresh, src)
    args = pch.include_args(fresh, src)
    assert args and args[0] == "-include"
    toolchain.compile_shared(fresh, str(path), str(tmp_path / "k.so"), args)
    import cffi
    ffi = cffi.FFI()
    ffi.cdef("int64_t f(void);")
    assert ffi.dlopen(str(tmp_path / "k.so")).f() == 6


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_kernels_built_with_it_match_scipy(fresh, dtype):
    """Sparse products (workspace kernels include the header) over dtypes, against scipy."""
    A = sp.random(120, 90, density=0.08, format="csr", random_state=3).astype(dtype)
    B = sp.random(90, 70, density=0.08, format="csr", random_state=4).astype(dtype)
    for rows in (A, A[:60]):
        got = (ls.asarray(rows) @ ls.asarray(B)).materialize()
        np.testing.assert_allclose(np.asarray(got.todense()), (rows @ B).toarray(), rtol=1e-5)
