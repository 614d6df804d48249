"""Limits: thread counts, shapes past int64, the memory guard's default, and inputs lazysparse
cannot store. Each is a clear error naming the operation, its operands and the problem, never a
crash or a silently wrong shape. Whatever could crash runs in a subprocess, so that a crash is a
failed test, not a crashed session; every result is checked against dense NumPy."""
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
from lazysparse.runtime import memory, threads

I64MAX = np.iinfo(np.int64).max


def run_child(code, timeout=600, **env):
    """Run ``code`` in a fresh interpreter, with ``env`` added to (or, for an empty value, taken
    from) the environment; the child prints ``OK`` at its end. A signal (a segfault) shows as a
    negative return code."""
    full = dict(os.environ, LAZYSPARSE_PAR_MIN_WORK="0")
    full.pop("LAZYSPARSE_NUM_THREADS", None)
    for k, v in env.items():
        if v:
            full[k] = v
        else:
            full.pop(k, None)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), \
        f"child failed (return code {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


_SPMV = """
import numpy as np, scipy.sparse as sp, lazysparse as ls
S = sp.random(300, 200, density=0.1, format="csr", random_state=0)
A, Ad, x = ls.asarray(S), S.toarray(), np.random.default_rng(1).random(200)
def check():
    # (a parallel SpMV, a sum over rows and a sparse product: each kernel on the threads)
    np.testing.assert_allclose((A @ x).todense(), Ad @ x, rtol=1e-12)
    np.testing.assert_allclose(A.sum(axis=0).todense(), Ad.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose((A @ A.T).todense(), Ad @ Ad.T, rtol=1e-12, atol=1e-12)
"""


# -- thread counts ----------------------------------------------------------------------------
def test_thread_count_past_the_cap_raises_and_kernels_still_run():
    run_child(_SPMV + """
import pytest
with pytest.raises(ValueError, match=r"set_num_threads\\(1000000\\): at most \\d+ "):
    ls.set_num_threads(10**6)  # (before the cap: a stack array of 64 MB, and a segfault)
assert ls.get_num_threads() == 1  # unchanged
check()
from lazysparse.runtime.threads import thread_cap
cap = thread_cap()
ls.set_num_threads(cap)  # the largest count allowed runs correctly
assert ls.get_num_threads() == cap
check()
with pytest.raises(ValueError, match=rf"set_num_threads\\({cap + 1}\\)"):
    ls.set_num_threads(cap + 1)
print("OK")
""")


def test_thread_cap_value(monkeypatch):
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    assert threads.thread_cap() == max(4 * (os.cpu_count() or 1), 64)
    monkeypatch.setenv("OMP_THREAD_LIMIT", "not a number")  # ignored, as OpenMP ignores it
    assert threads.thread_cap() == max(4 * (os.cpu_count() or 1), 64)
    monkeypatch.setenv("OMP_THREAD_LIMIT", "5")
    assert threads.thread_cap() == 5


def test_omp_thread_limit_lowers_the_cap():
    run_child(_SPMV + """
import pytest
from lazysparse.runtime.threads import thread_cap
assert thread_cap() == 3
with pytest.raises(ValueError, match=r"set_num_threads\\(4\\): at most 3 \\(OMP_THREAD_LIMIT\\)"):
    ls.set_num_threads(4)
ls.set_num_threads(3)
check()
print("OK")
""", OMP_THREAD_LIMIT="3")


def test_environment_thread_count_past_the_cap_is_clamped_with_a_warning():
    r = run_child(_SPMV + """
from lazysparse.runtime.threads import thread_cap
assert ls.get_num_threads() == thread_cap(), ls.get_num_threads()
check()
print("OK")
""", LAZYSPARSE_NUM_THREADS="1000000")
    assert re.search(r"LAZYSPARSE_NUM_THREADS=1000000 is more than the cap of \d+", r.stderr), r.stderr


# -- shapes past int64 --------------------------------------------------------------------------
def tall(rows, cols=2):
    """A COO array of a huge shape holding two entries (hypersparse arrays are allowed)."""
    return ls.asarray(sp.coo_array(([1.0, 2.0], ([0, rows - 1], [0, cols - 1])), shape=(rows, cols)))


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_pad_past_int64_raises(fmt):
    A = ls.asarray(np.ones((2, 2)), format=fmt)
    with pytest.raises(ValueError, match=r"^pad: the result would have shape \(9223372036854775810, "
                                         r".*past the int64 maximum.*padding shape \(2, 2\)"):
        np.pad(A, 2**62)
    # a pad that fits still gives NumPy's answer
    np.testing.assert_array_equal(np.pad(A, 1).todense(), np.pad(np.ones((2, 2)), 1))


@pytest.mark.parametrize("join,axis", [(ls.vstack, 0), (ls.concatenate, 0), (ls.hstack, 1)])
def test_joins_past_int64_raise(join, axis):
    Z = tall(2**62)
    parts = [Z, Z] if axis == 0 else [Z.T, Z.T]
    name = join.__name__
    with pytest.raises(ValueError, match=rf"^{name}: the result would have shape .*axis {axis} "
                                         r"\(9223372036854775808\) is past the int64 maximum \d+; joining "
                                         r"shapes \(.*4611686018427387904.*\), \(.*\)"):
        join(parts)


def test_joins_that_fit_are_exact():
    Z = tall(2**61)
    J = ls.vstack([Z, Z])
    assert J.shape == (2**62, 2)
    coo = J.to_scipy("coo")
    assert sorted(zip(coo.row.tolist(), coo.col.tolist())) == [(0, 0), (2**61 - 1, 1), (2**61, 0), (2**62 - 1, 1)]
    S = ls.stack([tall(2**62), tall(2**62)])  # every axis fits: allowed, however many elements
    assert S.shape == (2, 2**62, 2) and S.nnz == 4
    D = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ls.vstack([ls.asarray(D), ls.asarray(D)]).todense(), np.vstack([D, D]))


def test_kron_past_int64_raises():
    K = tall(2**40, 1)
    for fmt in (None, "csr", "dense"):
        with pytest.raises(ValueError, match=r"^kron: the result would have shape \(1208925819614629174706176, 1\)"
                                             r".*Kronecker product of shapes \(1099511627776, 1\) and "
                                             r"\(1099511627776, 1\)"):
            ls.kron(K, K, format=fmt)
    a, b = np.arange(4.0).reshape(2, 2), np.array([[0, 1.0], [2, 0]])
    np.testing.assert_array_equal(ls.kron(ls.asarray(a), ls.asarray(b)).todense(), np.kron(a, b))


def test_reshape_past_int64_raises():
    with pytest.raises(ValueError, match=r"^reshape: the result would have shape \(0, 1180591620717411303424\)"
                                         r".*reshaping shape \(0,\)"):
        ls.asarray(np.zeros(0)).reshape((0, 2**70))
    with pytest.raises(ValueError, match=r"^reshape: .*\(9223372036854775808, 1\).*past the int64 maximum"):
        tall(2**62).reshape((2**63, 1))
    np.testing.assert_array_equal(ls.asarray(np.arange(6.0)).reshape((2, 3)).todense(),
                                  np.arange(6.0).reshape(2, 3))


def test_broadcast_past_int64_raises():
    with pytest.raises(ValueError, match=r"^broadcast_to: the dense result of shape \(4611686018427387904, "
                                         r"4611686018427387904\) would have \d+ elements.*broadcasting shape \(1, 1\)"):
        ls.broadcast_to(ls.asarray(np.ones((1, 1))), (2**62, 2**62))
    with pytest.raises(ValueError, match=r"^broadcast_to: the result would have shape \(0, 1180591620717411303424\)"):
        ls.broadcast_to(ls.asarray(np.zeros((0, 1)), format="coo"), (0, 2**70))
    np.testing.assert_array_equal(ls.broadcast_to(ls.asarray(np.arange(3.0)), (2, 3)).todense(),
                                  np.broadcast_to(np.arange(3.0), (2, 3)))


def test_repeat_past_int64_raises():
    # (a child: the count summed in int64 wrapped to 0, and NumPy's repeat then crashed)
    run_child("""
import numpy as np, pytest, lazysparse as ls
x = ls.asarray(np.arange(1.0, 5.0), format="coo")
with pytest.raises(ValueError, match=r"^repeat: the result would have shape \\(18446744073709551616,\\)"
                                     r".*repeating shape \\(4,\\) along axis 0 4611686018427387904 times"):
    ls.repeat(x, 2**62)
with pytest.raises(ValueError, match=r"^repeat: the result would have shape \\(2, 13835058055282163712\\)"):
    ls.repeat(ls.asarray(np.ones((2, 3)), format="csr"), [2**62, 2**62, 2**62], axis=1)
np.testing.assert_array_equal(ls.repeat(x, 2).todense(), np.repeat(np.arange(1.0, 5.0), 2))
print("OK")
""")


def test_tile_past_int64_raises():
    with pytest.raises(ValueError, match=r"^tile: the result would have shape \(18446744073709551616, 1\)"
                                         r".*tiling shape \(1099511627776, 1\)"):
        ls.tile(tall(2**40, 1), (2**24, 1))
    np.testing.assert_array_equal(ls.tile(ls.asarray(np.eye(2), format="csr"), (2, 3)).todense(),
                                  np.tile(np.eye(2), (2, 3)))


@pytest.mark.parametrize("make,pattern", [
    (lambda: ls.eye(2**62), r"^eye: an array of shape \(4611686018427387904, 4611686018427387904\) in "
                            r"format ls.csr would store 4611686018427387904 entries .*more than a 64-bit "
                            r"address space holds"),
    (lambda: ls.eye(2**64), r"^eye: the result would have shape \(18446744073709551616, "
                            r"18446744073709551616\), whose axis 0 .* past the int64 maximum"),
    (lambda: ls.zeros((2**64,), format="coo"), r"^zeros: the result would have shape \(18446744073709551616,\)"),
    (lambda: ls.zeros((2**62, 2**62)), r"^zeros: the dense result of shape \(4611686018427387904, "
                                       r"4611686018427387904\) would have \d+ elements"),
    (lambda: ls.zeros((2**61,)), r"^zeros: the dense result of shape \(2305843009213693952,\) would take "
                                 r"18446744073709551616 bytes, more than the address space holds"),
    (lambda: ls.zeros((2**62, 2**62), format="csr"), r"^zeros: an array of shape .* in format ls.csr would "
                                                     r"store 0 entries .*address space"),
    (lambda: ls.ones((2**62, 2**62), format="coo"), r"^ones: an array of shape .* in format ls.coo would store"),
    (lambda: ls.diags([1.0], 0, shape=(2**64, 2)), r"^diags: the result would have shape \(18446744073709551616, 2\)"),
])
def test_creation_past_int64_raises(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make()


def test_creation_that_fits():
    Z = ls.zeros((2**62, 2**62), format="coo")  # stores nothing: allowed
    assert Z.shape == (2**62, 2**62) and Z.nnz == 0
    np.testing.assert_array_equal(ls.eye(4, k=1).todense(), np.eye(4, k=1))
    np.testing.assert_array_equal(ls.ones((2, 3), format="coo").todense(), np.ones((2, 3)))


def test_eye_out_of_memory_names_eye(monkeypatch):
    """Addressable but not allocatable: NumPy's MemoryError, raised again naming the function."""
    def refuse(*a, **k):
        raise MemoryError("Unable to allocate 8.00 TiB")
    monkeypatch.setattr(np, "arange", refuse)
    with pytest.raises(MemoryError, match=r"^eye: out of memory making an array of shape \(1099511627776, "
                                          r"1099511627776\) in format ls.csr"):
        ls.eye(2**40)


# -- the memory guard's default -----------------------------------------------------------------
def _files(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_cgroup_v2_room(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("0::/job/step\n")
    _files(tmp_path, {"fs/job/step/memory.max": "max\n", "fs/job/step/memory.current": "100\n",
                      "fs/job/memory.max": "5000\n", "fs/job/memory.current": "1200\n",
                      "fs/memory.max": "max\n"})
    # the group above the process's own limits it: 5000 - 1200
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) == 3800
    (tmp_path / "fs/job/step/memory.max").write_text("2000\n")
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) == 1900
    # a container sees its own group as the root: the path in /proc/self/cgroup is absent
    proc.write_text("0::/elsewhere\n")
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) is None  # (the root's "max")
    (tmp_path / "fs/memory.max").write_text("4096\n")
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) == 4096  # no memory.current: 0 used


def test_cgroup_v1_room(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("9:name=systemd:/\n4:memory:/job\n1:cpu,cpuacct:/job\n0::/\n")
    _files(tmp_path, {"fs/memory/memory.limit_in_bytes": "9223372036854771712\n",
                      "fs/memory/job/memory.limit_in_bytes": "8000\n",
                      "fs/memory/job/memory.usage_in_bytes": "3000\n"})
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) == 5000
    (tmp_path / "fs/memory/job/memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) is None  # v1's "no limit"


def test_cgroup_files_absent_or_garbled(tmp_path):
    assert memory._cgroup_room(str(tmp_path / "nothing"), str(tmp_path / "no-proc")) is None
    proc = tmp_path / "cgroup"
    proc.write_text("garbage\n0::/\n")
    _files(tmp_path, {"fs/memory.max": "lots\n"})
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) is None
    # more used than the limit (memory.current counts the page cache): no room, not negative
    _files(tmp_path, {"fs/memory.max": "100\n", "fs/memory.current": "500\n"})
    assert memory._cgroup_room(str(tmp_path / "fs"), str(proc)) == 0


def test_rlimit_room(monkeypatch):
    import resource
    monkeypatch.setattr(resource, "getrlimit", lambda what: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert memory._rlimit_room() is None
    monkeypatch.setattr(resource, "getrlimit", lambda what: (10 << 30, resource.RLIM_INFINITY))
    monkeypatch.setattr(memory, "_mapped", lambda: 3 << 30)
    assert memory._rlimit_room() == 7 << 30


@pytest.mark.parametrize("avail,rlim,cgroup,want,source", [
    (16 << 30, None, None, 12 << 30, "memory available"),
    (16 << 30, 4 << 30, None, 3 << 30, "RLIMIT_AS"),
    (16 << 30, 4 << 30, 2 << 30, 3 << 29, "cgroup"),
    (1 << 30, 4 << 30, 2 << 30, 3 << 28, "memory available"),
])
def test_default_limit_is_the_least_bound(avail, rlim, cgroup, want, source, monkeypatch):
    monkeypatch.delenv("LAZYSPARSE_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(memory, "_available", lambda: avail)
    monkeypatch.setattr(memory, "_rlimit_room", lambda: rlim)
    monkeypatch.setattr(memory, "_cgroup_room", lambda: cgroup)
    monkeypatch.setattr(memory, "_cached", {})
    assert memory.limit() == want
    with pytest.raises(MemoryError, match=rf"^zeros: .*\(LAZYSPARSE_MEMORY_LIMIT unset: 3/4 of .*{source}"):
        ls.zeros((want // 8 + 1,))


def test_low_rlimit_as_refuses_a_big_dense_result():
    """Under ``ulimit -v`` a dense result past the address space left is refused by the guard,
    naming the operation, instead of failing in NumPy's allocator (or crashing)."""
    run_child("""
import resource, numpy as np, scipy.sparse as sp, pytest, lazysparse as ls
u = sp.random(20000, 5, density=0.5, format="csr", random_state=0)
X = np.random.default_rng(1).random((5, 20000))
U = ls.asarray(u)
small = (ls.asarray(u[:30]) @ X[:, :20]).materialize()  # compiles the kernel first
np.testing.assert_allclose(small.todense(), u[:30] @ X[:, :20])
mapped = [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:")][0]
resource.setrlimit(resource.RLIMIT_AS, (mapped + (512 << 20), resource.RLIM_INFINITY))
# sparse times dense is a dense 20000 x 20000 float64 array: 3.0 GiB
with pytest.raises(MemoryError, match=r"^materialize: the result of .* dense array of shape \\(20000, 20000\\) "
                                      r".*LAZYSPARSE_MEMORY_LIMIT unset: 3/4 of the address space left under RLIMIT_AS"):
    (U @ X).materialize()
with pytest.raises(MemoryError, match=r"^zeros: the result would be a dense array of shape \\(20000, 20000\\)"):
    ls.zeros((20000, 20000))
# what fits still runs, and gives scipy's answer
np.testing.assert_allclose((ls.asarray(u[:300]) @ X[:, :300]).todense(), u[:300] @ X[:, :300])
print("OK")
""", LAZYSPARSE_MEMORY_LIMIT="")


# -- inputs that cannot be stored ---------------------------------------------------------------
def _reshaped(m, shape):
    m._shape = shape  # (scipy's constructors refuse these shapes; set behind their back)
    return m


@pytest.mark.parametrize("make,pattern", [
    (lambda: _reshaped(sp.bsr_array(np.eye(4), blocksize=(2, 2)), (2, 2, 2)),
     r"^asarray: invalid BSR input: shape \(2, 2, 2\) has 3 dimensions; scipy.sparse BSR arrays are 2-d"),
    (lambda: _reshaped(sp.bsr_array(np.eye(4), blocksize=(2, 2)), (16,)),
     r"^asarray: invalid BSR input: shape \(16,\) has 1 dimension; scipy.sparse BSR arrays are 2-d"),
    (lambda: _reshaped(sp.dia_array(np.eye(4)), (2, 2, 2)), r"^asarray: invalid DIA input: shape \(2, 2, 2\)"),
    (lambda: _reshaped(sp.lil_array(np.eye(4)), (2, 2, 2)), r"^asarray: invalid LIL input: shape \(2, 2, 2\)"),
    (lambda: _reshaped(sp.dok_array(np.eye(4)), (2, 2, 2)), r"^asarray: invalid DOK input: .*1-d or 2-d"),
    (lambda: _reshaped(sp.coo_array(np.eye(4)), (2, 2, 2)),
     r"^asarray: invalid COO input: shape \(2, 2, 2\) has 3 dimensions but there are 2 coordinate arrays"),
])
def test_scipy_input_of_the_wrong_rank(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        ls.asarray(make())


def _object_values(fmt):
    m = sp.csr_array(np.eye(3)).asformat(fmt)
    m.data = m.data.astype(object)
    return m


@pytest.mark.parametrize("make,what", [
    (lambda: np.array([1, "a"], dtype=object), "object"),
    (lambda: np.array([1, 2], dtype=object), "object"),
    (lambda: _object_values("csr"), "object of a scipy.sparse csr_array"),
    (lambda: _object_values("coo"), "object of a scipy.sparse coo_array"),
    (lambda: _object_values("bsr"), "object of a scipy.sparse bsr_array"),
    (lambda: _object_values("dia"), "object of a scipy.sparse dia_array"),
    (lambda: pydata.COO(np.array([[0, 1]]), np.array([1, "a"], dtype=object), shape=(3,)), "object"),
    (lambda: np.array(["a", "b"]), "<U1 \\(strings\\)"),
])
def test_unsupported_dtypes_are_a_clear_type_error(make, what):
    with pytest.raises(TypeError, match=rf"^asarray: unsupported dtype {what}.*lazysparse stores bool, int8, "
                                        r"int16, int32, int64, uint8, uint16, uint32, uint64, float32, "
                                        r"float64, complex64, complex128"):
        ls.asarray(make())


def test_object_values_message_says_what_to_do():
    with pytest.raises(TypeError, match=r"convert the values to a numeric dtype first"):
        ls.asarray(np.array([1, 2], dtype=object))
