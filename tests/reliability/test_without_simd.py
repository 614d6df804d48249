"""The kernels' scalar paths: with ``LAZYSPARSE_SIMD=0`` every hand-written vector path
(AVX-512 segment sums, AVX2/AVX-512 workspace probes, libmvec calls) is compiled out, as on a
machine without those instructions. The suite's modules that hold the vector paths' tests run
again that way, in a subprocess with a cache of its own, so that every test passes whatever the
CPU, with the vector code built and without it."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = ("tests/runtime/test_warm_path.py", "tests/compiler/lower/test_segment_loops.py", "tests/compiler/lower/test_vector_math.py",
           "tests/compiler/lower/test_workspaces.py")


def test_switch_drops_the_native_target():
    code = ("import lazysparse as ls, numpy as np, scipy.sparse as sp\n"
            "A = ls.asarray(sp.random_array((20, 20), density=0.3, format='csr', random_state=0))\n"
            "(A @ np.ones(20)).materialize()\n"
            "from lazysparse.runtime.toolchain import compiler_info\n"
            "f = ls.cache_info()['flags']\n"
            "print('-march=native' in f, '-DLS_MVEC' in f, compiler_info().march_native)\n")
    out = {}
    for simd in ("0", "1"):
        env = dict(os.environ, LAZYSPARSE_SIMD=simd,
                   LAZYSPARSE_CACHE_DIR=tempfile.mkdtemp(prefix="lazysparse-simd-"))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        out[simd] = r.stdout.split()
    assert out["0"][:2] == ["False", "False"] and out["0"][2] == "False"
    # without the switch, the native target wherever the compiler's probe accepted it
    assert out["1"][0] == out["1"][2]


@pytest.fixture(scope="module")
def nosimd_cache():
    """One kernel cache for the scalar builds, shared by the modules run in this process."""
    with tempfile.TemporaryDirectory(prefix="lazysparse-nosimd-") as d:
        yield d


# one module a subprocess: the reruns are the suite's longest tests, and as four they spread over
# the workers of a parallel run instead of keeping one busy alone at the end
@pytest.mark.parametrize("module", MODULES)
def test_vector_modules_pass_with_the_vector_paths_compiled_out(module, nosimd_cache):
    env = dict(os.environ, LAZYSPARSE_SIMD="0", LAZYSPARSE_CACHE_DIR=nosimd_cache)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", module],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
