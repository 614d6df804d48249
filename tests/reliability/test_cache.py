"""The kernel cache (lazysparse/runtime/kernel_cache.py, toolchain.py, threads.py): checksummed
entries rebuilt when corrupt or truncated, private 0700 directory, entries of other owners or
writable by others never loaded, fallback from an unwritable directory, 8 processes compiling one
kernel, threads compiling once, no compiler.

Each guarantee was checked by breaking the code that provides it (mutation testing: the
checksum, metadata, ownership and mode checks, the 0700 modes, the fallbacks and their warning,
the flock, the temporary names, the in-flight registry and its lock, the no-compiler error):
each such change makes some test here fail. Entries or directories owned by another user can
only be made by root (``give_away``): those tests skip otherwise. Root ignores mode bits, so
the unwritable-directory test uses ``chattr +i`` under root (and skips where that fails).

Every test gets its own LAZYSPARSE_CACHE_DIR and a reset runtime state. Kernels are tiny hand-written
C sources defining ``int32_t ls_kernel(void **p, int64_t *d)``.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from contextlib import contextmanager

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo

# The imports every child process of these tests starts with.
_IMPORT = textwrap.dedent(f"""
    import os, re, sys, types
    sys.path.insert(0, {ROOT!r})
    from lazysparse.runtime import kernel_cache as c
    from lazysparse.runtime import toolchain as comp
    from lazysparse.runtime import threads as thr
""")
_ns: dict = {}
exec(_IMPORT, _ns)
c, comp, thr = _ns["c"], _ns["comp"], _ns["thr"]


def src(tag: str, value: int = 42) -> str:
    return ("#include <stdint.h>\n"
            f"/* {tag} */\n"
            "int32_t ls_kernel(void **p, int64_t *d) {\n"
            f"    d[0] = {value};\n"
            "    return 0;\n"
            "}\n")


def call(kernel) -> int:
    d = c.ffi.new("int64_t[4]")
    assert kernel.fn(c.ffi.NULL, d) == 0
    return d[0]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("LAZYSPARSE_CACHE_DIR", str(d))
    c._reset_for_tests()
    yield d
    c._reset_for_tests()


def run_child(body: str, env=None, timeout=60):
    """Run python code in a fresh interpreter; it prints one JSON line last."""
    code = _IMPORT + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env if env is not None else os.environ.copy(), timeout=timeout,
                          cwd=ROOT)


def child_json(r) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


_CHILD_LOAD = """
import json, time
t0 = time.perf_counter()
k = c.load_kernel({source!r})
dt = time.perf_counter() - t0
d = c.ffi.new("int64_t[4]")
rc = k.fn(c.ffi.NULL, d)
print(json.dumps(dict(seconds=dt, rc=rc, value=d[0], path=k.path, **c.cache_info())))
"""


def entry_files(d, key):
    vdir = os.path.join(d, os.listdir(d)[0])
    meta = json.loads(open(os.path.join(vdir, key + ".json")).read())
    return vdir, meta, os.path.join(vdir, meta["so"])


# ------------------------------------------------------------------------------------------------

def test_compile_and_call(cache_dir):
    s = src("compile_and_call")
    k = c.load_kernel(s)
    assert call(k) == 42
    assert len(k.key) == 64 and int(k.key, 16) >= 0
    assert k.source == s and os.path.isfile(k.path) and k.path.endswith(".so")
    assert k.compile_seconds > 0
    info = c.cache_info()
    assert (info["misses"], info["compiles"], info["hits"], info["disk_hits"]) == (1, 1, 0, 0)
    assert info["entries"] == 1
    assert info["disk_dir"] == os.path.dirname(k.path)
    assert info["disk_dir"].startswith(str(cache_dir))
    print(f"cold compile of a tiny kernel: {k.compile_seconds * 1e3:.1f} ms")
    assert k.compile_seconds < 1.5


def test_memory_hit_and_counters(cache_dir):
    a = c.load_kernel(src("mem"))
    b = c.load_kernel(src("mem"))
    assert a is b
    info = c.cache_info()
    assert (info["hits"], info["misses"], info["compiles"], info["entries"]) == (1, 1, 1, 1)
    # a different source is a different kernel
    k2 = c.load_kernel(src("mem", 7))
    assert k2.key != a.key and call(k2) == 7
    info = c.cache_info()
    assert (info["misses"], info["compiles"], info["entries"]) == (2, 2, 2)
    # memory cleared: the next load comes from disk, no compile; counters are not reset
    c.clear_cache()
    assert c.cache_info()["entries"] == 0
    k3 = c.load_kernel(src("mem"))
    assert call(k3) == 42
    info = c.cache_info()
    assert (info["disk_hits"], info["compiles"], info["misses"], info["entries"]) == (1, 2, 3, 1)
    # and clear_cache(disk=True) forces a recompile
    c.clear_cache(disk=True)
    assert not [n for n in os.listdir(info["disk_dir"]) if n.endswith(".so")]
    k4 = c.load_kernel(src("mem"))
    assert call(k4) == 42 and c.cache_info()["compiles"] == 3
    assert k4.path != k3.path  # a path dlopen-ed before is never reused for new contents


def test_key_covers_compiler_and_flags(cache_dir):
    info = comp.compiler_info()
    key = c.kernel_key(src("key"))
    assert key == c.kernel_key(src("key")) and key != c.kernel_key(src("key2"))
    assert "-fwrapv" in info.flags and "-O3" in info.flags
    k = c.load_kernel(src("key"))
    assert k.key == key
    _, meta, _ = entry_files(cache_dir, key)
    assert meta["flags"] == list(info.flags) and meta["compiler"] == info.argv0


def test_disk_hit_in_new_process(cache_dir):
    s = src("disk_hit")
    k = c.load_kernel(s)
    out = child_json(run_child(_CHILD_LOAD.format(source=s)))
    assert (out["rc"], out["value"]) == (0, 42)
    assert (out["disk_hits"], out["compiles"], out["misses"]) == (1, 0, 1)
    assert out["path"] == k.path
    print(f"disk-hit load in a new process: {out['seconds'] * 1e3:.2f} ms")
    assert out["seconds"] <= 0.2


def no_dlopen_of(monkeypatch, *paths):
    """Make ``c._dlopen`` refuse ``paths`` (raising AssertionError, which the cache does not
    catch): an entry that must not be loaded fails the test instead of being mapped (a truncated
    shared object mapped by dlopen can kill the process with SIGBUS)."""
    real = c._dlopen
    banned = {os.path.realpath(p) for p in paths}

    def guarded(path, *args):
        assert os.path.realpath(path) not in banned, f"{path} was dlopen-ed"
        return real(path, *args)

    monkeypatch.setattr(c, "_dlopen", guarded)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "delete_so", "bad_meta",
                                    "stale_meta", "foreign_so"])
def test_corrupt_entry_is_rebuilt(cache_dir, damage, monkeypatch):
    s = src("corrupt_" + damage)
    # build in a child: this process must not have the file mapped while it is damaged in place
    built = child_json(run_child(_CHILD_LOAD.format(source=s)))
    assert built["compiles"] == 1
    key = c.kernel_key(s)
    vdir, meta, so = entry_files(cache_dir, key)
    if damage == "truncate":
        with open(so, "r+b") as f:
            f.truncate(os.path.getsize(so) // 2)
    elif damage == "flip":
        with open(so, "r+b") as f:
            f.seek(os.path.getsize(so) // 2)
            b = f.read(16)
            f.seek(-16, 1)
            f.write(bytes(x ^ 0xFF for x in b))
    elif damage == "empty":
        open(so, "wb").close()
    elif damage == "delete_so":
        os.unlink(so)
    elif damage == "bad_meta":
        with open(os.path.join(vdir, key + ".json"), "w") as f:
            f.write("{not json")
    elif damage in ("stale_meta", "foreign_so"):
        # well-formed metadata that does not describe this source: another source's digest, or
        # a shared object named outside this key (both with a matching size and checksum)
        if damage == "stale_meta":
            meta["source_sha256"] = "0" * 64
        else:
            other = os.path.join(vdir, "0" * 64 + ".so")
            shutil.copyfile(so, other)
            os.chmod(other, 0o700)
            meta["so"] = os.path.basename(other)
            so = other
        with open(os.path.join(vdir, key + ".json"), "w") as f:
            json.dump(meta, f)
    if damage != "delete_so":  # (a deleted .so may be rebuilt under its old name)
        no_dlopen_of(monkeypatch, so)
    k = c.load_kernel(s)
    assert call(k) == 42
    info = c.cache_info()
    assert info["compiles"] == 1 and info["disk_hits"] == 0 and info["rebuilt"] == 1
    if damage == "flip":  # the rebuilt entry is good for the next process (one case: time)
        out = child_json(run_child(_CHILD_LOAD.format(source=s)))
        assert (out["disk_hits"], out["compiles"], out["value"]) == (1, 0, 42)


OTHER_UID = 65534  # "nobody": a user other than the one running the tests


def give_away(path):
    """chown ``path`` to another user (keeping its mode), or skip: only root can."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or os.getuid() == OTHER_UID:
        pytest.skip("making a file owned by another user needs root")
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    os.chown(path, OTHER_UID, OTHER_UID)
    os.chmod(path, mode)  # (chown may clear bits)


@pytest.mark.parametrize("how", ["writable", "foreign"])
@pytest.mark.parametrize("which", ["so", "json"])
def test_insecure_entry_not_loaded(cache_dir, which, how, monkeypatch):
    """An entry writable by others (mode 0666) or owned by another user (its mode unchanged,
    0600/0700) is rejected and rebuilt; its shared object is never dlopen-ed."""
    s = src(f"insecure_{which}_{how}")
    child_json(run_child(_CHILD_LOAD.format(source=s)))
    key = c.kernel_key(s)
    vdir, meta, so = entry_files(cache_dir, key)
    target = so if which == "so" else os.path.join(vdir, key + ".json")
    if how == "writable":
        os.chmod(target, 0o666)
    else:
        give_away(target)
    no_dlopen_of(monkeypatch, so)
    k = c.load_kernel(s)
    assert call(k) == 42
    info = c.cache_info()
    assert info["rejected"] == 1 and info["compiles"] == 1 and info["disk_hits"] == 0
    assert k.path != so
    assert stat.S_IMODE(os.stat(k.path).st_mode) & 0o022 == 0


def test_cache_dir_created_0700(cache_dir):
    c.load_kernel(src("mode"))
    vdir = c.cache_info()["disk_dir"]
    assert os.path.dirname(vdir) == str(cache_dir)
    for d in (str(cache_dir), vdir):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    for name in os.listdir(vdir):
        assert stat.S_IMODE(os.stat(os.path.join(vdir, name)).st_mode) & 0o077 == 0, name


def _fallback_check(expected_substring="", compiles=1):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k = c.load_kernel(src("fallback"))
    assert call(k) == 42
    msgs = [str(x.message) for x in w]
    assert any("temporary directory" in m and expected_substring in m for m in msgs), msgs
    info = c.cache_info()
    assert info["fallback_dir"] and info["compiles"] == compiles
    assert os.path.dirname(k.path) == info["disk_dir"]
    assert stat.S_IMODE(os.stat(info["disk_dir"]).st_mode) == 0o700
    shutil.rmtree(info["disk_dir"], ignore_errors=True)


@contextmanager
def unwritable(path):
    """``path`` (a directory) made unwritable for this process: mode 0500, or for root (whom
    modes do not stop) the immutable attribute (``chattr +i``); skips where neither works."""
    os.chmod(path, 0o500)
    immutable = False
    try:
        if os.access(path, os.W_OK):  # root
            chattr = shutil.which("chattr")
            r = subprocess.run([chattr, "+i", str(path)], capture_output=True) if chattr else None
            if r is None or r.returncode != 0 or os.access(path, os.W_OK):
                pytest.skip("cannot make a directory unwritable for this user (root without "
                            "chattr +i on this file system)")
            immutable = True
        yield
    finally:
        if immutable:
            subprocess.run([shutil.which("chattr"), "-i", str(path)], check=True)
        os.chmod(path, 0o700)


@pytest.mark.parametrize("where,reason", [("root", "could not be created"),
                                          ("version", "not writable")], ids=["root", "version"])
def test_unwritable_cache_dir_falls_back(cache_dir, where, reason):
    """The cache root (so the version directory cannot be created) or the version directory
    itself is unwritable: a private temporary directory is used, with a warning saying why."""
    vdir = os.path.join(cache_dir, "v" + c._version())
    os.makedirs(vdir if where == "version" else cache_dir, mode=0o700)
    with unwritable(vdir if where == "version" else cache_dir):
        _fallback_check(reason)


def test_uncreatable_cache_dir_falls_back(tmp_path, monkeypatch):
    # works as root too: a path below a regular file can never be created
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("LAZYSPARSE_CACHE_DIR", str(tmp_path / "file" / "cache"))
    c._reset_for_tests()
    try:
        _fallback_check()
    finally:
        c._reset_for_tests()


def test_group_writable_cache_dir_not_used(cache_dir):
    vdir = os.path.join(cache_dir, "v" + c._version())
    os.makedirs(vdir)
    os.chmod(vdir, 0o777)
    _fallback_check()


def test_cache_dir_owned_by_another_user_not_used(cache_dir):
    vdir = os.path.join(cache_dir, "v" + c._version())
    os.makedirs(vdir, mode=0o700)
    os.chmod(vdir, 0o700)
    give_away(vdir)
    _fallback_check()
    assert not os.listdir(vdir)  # nothing was written into it either


def test_cache_dir_failing_after_the_checks_falls_back(cache_dir):
    """The directory passed the checks, then became unusable (here: replaced by a regular file,
    which root cannot write into either): the next build goes to a private temporary directory."""
    k = c.load_kernel(src("before"))
    vdir = c.cache_info()["disk_dir"]
    shutil.rmtree(vdir)
    with open(vdir, "w") as f:
        f.write("not a directory")
    try:
        _fallback_check(compiles=2)
    finally:
        os.unlink(vdir)
    assert call(k) == 42


@pytest.mark.parametrize("umask", [0o000, 0o177], ids=["umask000", "umask177"])
def test_cache_dir_0700_whatever_the_umask(tmp_path, umask):
    """The version directory is 0700 under any umask: one that grants everything (0o000) and one
    that withholds the owner's own execute bit (0o177: mkdir(0700) alone gives 0600, a directory
    its owner cannot enter). For 0o177 the cache root exists already (os.makedirs would create
    it 0600)."""
    root = tmp_path / "cache"
    if umask == 0o177:
        root.mkdir(mode=0o700)
    env = dict(os.environ, LAZYSPARSE_CACHE_DIR=str(root))
    out = child_json(run_child(f"""
        import json, os, stat, warnings
        os.umask({umask:#o})
        warnings.simplefilter("error")  # a fallback warning fails the child
        k = c.load_kernel({src("umask" + oct(umask))!r})
        d = c.ffi.new("int64_t[4]")
        k.fn(c.ffi.NULL, d)
        vdir = c.cache_info()["disk_dir"]
        print(json.dumps(dict(value=d[0], vdir=vdir, fallback=c.cache_info()["fallback_dir"],
                              modes={{p: stat.S_IMODE(os.stat(p).st_mode)
                                      for p in [{str(root)!r}, vdir]
                                      + [os.path.join(vdir, n) for n in os.listdir(vdir)]}})))
    """, env=env))
    assert out["value"] == 42 and not out["fallback"]
    assert os.path.dirname(out["vdir"]) == str(root)
    assert out["modes"][out["vdir"]] == 0o700, oct(out["modes"][out["vdir"]])
    if umask == 0o000:
        assert out["modes"][str(root)] == 0o700
    for path, mode in out["modes"].items():
        assert mode & 0o077 == 0, (path, oct(mode))


def test_threads_compile_once(cache_dir, in_threads, monkeypatch):
    """8 threads ask for the same new kernel at once, 4 rounds of new kernels: one compile and
    one miss per kernel, the 7 others wait for it (hits). A race between finding no build in
    flight and registering one would show as more misses: the interpreter switches threads
    every microsecond here, and in rounds 2 and 3 the in-flight lookup is slow (5 ms), so a
    lookup outside the lock lets every thread through."""

    class SlowDict(dict):  # the lookup, then a pause before its answer is acted upon
        def get(self, *a):
            found = super().get(*a)
            time.sleep(0.005)
            return found

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for rnd in range(4):
            if rnd == 2:
                monkeypatch.setattr(c, "_inflight", SlowDict())
            s = src(f"threads{rnd}")
            barrier = threading.Barrier(8)
            results = [None] * 8

            def work(i):
                barrier.wait()
                results[i] = c.load_kernel(s)

            before = c.cache_info()
            assert in_threads(work, 8) == []
            assert all(r is results[0] for r in results)
            info = c.cache_info()
            got = tuple(info[k] - before[k] for k in ("compiles", "misses", "hits", "disk_hits"))
            assert got == (1, 1, 7, 0), (rnd, got)
            assert call(results[0]) == 42
    finally:
        sys.setswitchinterval(old)


def test_threads_materializing_compile_each_kernel_once(cache_dir, in_threads):
    """Each kernel compiled once, end to end: 8 threads materialize expressions needing the same new
    kernels at once (each thread its own operands); every kernel is compiled once and every result
    is right."""
    import numpy as np
    import scipy.sparse as sp

    import lazysparse as ls
    from lazysparse.compiler.pipeline import kernel_log

    c.clear_cache()  # also forgets compiled plans, so the kernels below are new to this process
    mats = [sp.random(40, 30, density=0.2, format="csr", random_state=k) for k in range(16)]
    xs = [np.random.default_rng(k).standard_normal(30) for k in range(8)]
    barrier = threading.Barrier(8)
    keys, wrong = [set() for _ in range(8)], []

    def work(i):
        A, B = ls.asarray(mats[i]), ls.asarray(mats[8 + i])
        barrier.wait()
        with kernel_log() as log:  # add, multiply (sparse results), A @ x, column sums
            # (each materialized: a DAG would substitute the element-wise temporaries)
            got = ((A + B).materialize() @ xs[i]).todense() + (A * B).materialize().sum(axis=0).todense().sum()
        keys[i] = {r.kernel.key for _, r in log}
        Ad, Bd = mats[i].toarray(), mats[8 + i].toarray()
        want = (Ad + Bd) @ xs[i] + (Ad * Bd).sum()
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            wrong.append(i)

    before = c.cache_info()
    assert in_threads(work, 8) == []
    assert wrong == []
    used = set().union(*keys)
    assert all(k == keys[0] for k in keys) and len(used) >= 4
    info = c.cache_info()
    assert info["compiles"] - before["compiles"] == len(used)
    assert info["misses"] - before["misses"] == len(used)


def test_threads_share_one_fused_kernel_and_its_call(in_threads):
    """Each kernel compiled once, on the fused path: 8 threads run the same fused plan (SDDMM, one
    kernel and one generated call with pooled ``p[]``/``d[]`` that remember each slot's last
    storage) at once, on their own operands and on shared ones, several rounds, on one and two
    kernel threads: every value is NumPy's. A set of arguments used by two calls at once, or one
    that kept another thread's operand, gives wrong values or a crash here."""
    import numpy as np
    import scipy.sparse as sp

    import lazysparse as ls
    from lazysparse.compiler.pipeline import kernel_log
    from lazysparse.compiler.fused_pipeline import FusedRun

    mats = [sp.random(60, 50, density=0.2, format="csr", random_state=k) for k in range(8)]
    rng = np.random.default_rng(0)
    us = [rng.standard_normal((60, 8)) for _ in range(8)]
    vs = [rng.standard_normal((50, 8)) for _ in range(8)]
    shared = ls.asarray(vs[0])
    barrier = threading.Barrier(8)
    wrong, kinds = [], set()

    def work(i):
        A, U = ls.asarray(mats[i]), ls.asarray(us[i])
        barrier.wait()
        for r in range(12):
            V, Vd = (shared, vs[0]) if (i + r) % 2 else (ls.asarray(vs[i]), vs[i])
            with kernel_log() as log:
                res = (A * (U @ V.T)).materialize()
            kinds.update(type(e) for e in log)
            got = res.todense()
            if not np.allclose(got, mats[i].toarray() * (us[i] @ Vd.T), rtol=1e-12, atol=1e-12):
                wrong.append((i, r))

    for nt in (1, 2):
        ls.set_num_threads(nt)
        try:
            assert in_threads(work, 8) == []
        finally:
            ls.set_num_threads(1)
    assert wrong == []
    assert kinds == {FusedRun}


_CHILD_GATED = """
import os, time
gate = {gate!r}
open(os.path.join(gate, "ready-%d" % os.getpid()), "w").close()
t_end = time.time() + 60
while not os.path.exists(os.path.join(gate, "go")) and time.time() < t_end:
    time.sleep(0.001)
"""


@pytest.mark.parametrize("flock", [True, False], ids=["flock", "no_flock"])
def test_processes_compile_concurrently(cache_dir, tmp_path, flock):
    """8 processes load the same new kernel at once (they wait at a gate after importing, then
    go together): all succeed, and the entry they leave behind is sound (a 9th process loads it
    from disk). With the flock one compiles and the others wait for it; without one (platforms
    with no fcntl, simulated) several may compile, and the atomic renames keep every reader
    from seeing a half-written file."""
    s = src("processes_" + ("flock" if flock else "no_flock"))
    gate = tmp_path / "gate"
    gate.mkdir()
    code = _IMPORT + textwrap.dedent(("" if flock else "c.fcntl = None\n")
                                     + _CHILD_GATED.format(gate=str(gate))
                                     + _CHILD_LOAD.format(source=s))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(8)]
    try:
        t_end = time.time() + 60
        while len(os.listdir(gate)) < 8 and time.time() < t_end:
            time.sleep(0.005)
    finally:
        (gate / "go").touch()
    outs = []
    for p in procs:
        so, se = p.communicate(timeout=120)
        assert p.returncode == 0, se
        outs.append(json.loads(so.strip().splitlines()[-1]))
    assert all((o["rc"], o["value"]) == (0, 42) for o in outs)
    assert sum(o["compiles"] for o in outs) + sum(o["disk_hits"] for o in outs) == 8
    if flock and c.fcntl is not None:  # the flock makes the others wait and then load from disk
        assert sum(o["compiles"] for o in outs) == 1
    vdir = outs[0]["disk_dir"]
    assert not [n for n in os.listdir(vdir) if n.endswith(".tmp")]
    after = child_json(run_child(_CHILD_LOAD.format(source=s)))
    assert (after["disk_hits"], after["compiles"], after["value"]) == (1, 0, 42)
    print(f"{'with' if flock else 'without'} flock: {sum(o['compiles'] for o in outs)} of 8 "
          "processes compiled")


def test_entry_files_are_written_under_temporary_names(cache_dir, monkeypatch):
    """What processes without the flock rely on (the no_flock case above, platforms without
    fcntl): every file of an entry (.c, .so, .json) is written under a unique temporary name in
    the cache directory and renamed into place, so a reader finds it complete or not at all. The
    writes are intercepted: ``os.open`` for writing in kernel_cache.py, and the compiler's output
    path."""
    import types
    writes = []
    proxy = types.ModuleType("os")
    proxy.__dict__.update(os.__dict__)

    def open_(path, flags, *a, **k):
        if flags & (os.O_WRONLY | os.O_RDWR):
            writes.append(os.fspath(path))
        return os.open(path, flags, *a, **k)

    proxy.open = open_
    monkeypatch.setattr(c, "os", proxy)
    real = comp.compile_shared

    def compile_shared(info, src_path, out_path, extra=()):
        writes.append(out_path)
        return real(info, src_path, out_path, extra)

    monkeypatch.setattr(comp, "compile_shared", compile_shared)
    k = c.load_kernel(src("temporary_names"))
    assert call(k) == 42
    vdir = c.cache_info()["disk_dir"]
    entry = [w for w in writes if os.path.dirname(w) == vdir and not w.endswith(".lock")]
    assert len(entry) == 3, writes  # source, shared object, metadata
    for w in entry:
        assert os.path.basename(w).startswith(k.key) and w.endswith(".tmp"), w
        assert not os.path.exists(w), w  # renamed away
    names = {n for n in os.listdir(vdir) if n.startswith(k.key)}
    assert names >= {k.key + ".c", k.key + ".json", os.path.basename(k.path)}, names


def test_no_compiler(cache_dir, tmp_path):
    empty = tmp_path / "emptybin"
    empty.mkdir()
    env = dict(os.environ, CC="/nonexistent/cc", PATH=str(empty))
    r = run_child("""
        import json
        try:
            c.load_kernel("int x;")
            print(json.dumps({"raised": None}))
        except comp.CompilerNotFoundError as e:
            print(json.dumps({"raised": type(e).__name__, "runtime": isinstance(e, RuntimeError),
                              "msg": str(e), "omp": c.openmp_available()}))
    """, env=env)
    out = child_json(r)
    assert out["raised"] == "CompilerNotFoundError" and out["runtime"]
    assert "C compiler" in out["msg"] and "apt-get install gcc" in out["msg"]
    assert "xcode-select --install" in out["msg"] and "conda" in out["msg"]
    assert out["omp"] is False


def test_no_compiler_on_first_use_of_the_public_api(cache_dir, tmp_path):
    """What a user sees: ``import lazysparse`` works without a compiler, and the first
    operation that needs a kernel raises the same message, naming what to install (not a
    KeyError, a generic RuntimeError or a compiler traceback); the next one again."""
    empty = tmp_path / "emptybin"
    empty.mkdir()
    env = dict(os.environ, CC="/nonexistent/cc", PATH=str(empty))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {ROOT!r})
        import numpy as np, scipy.sparse as sp
        import lazysparse as ls
        A = ls.asarray(sp.random_array((5, 4), density=0.5, format="csr", rng=1))
        out = []
        # one fused kernel (compiler/fused_pipeline.py), then one kernel per operation (runner.py)
        for build in (lambda: (A @ np.ones((4, 3))) * 2, lambda: A @ np.ones(4)):
            try:
                build().materialize()
                out.append(None)
            except Exception as e:
                out.append([type(e).__name__, isinstance(e, RuntimeError), str(e)])
        print(json.dumps(out))
    """)], capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    for got in json.loads(r.stdout.strip().splitlines()[-1]):
        assert got is not None, "a kernel ran without a compiler"
        name, runtime, msg = got
        assert name == "CompilerNotFoundError" and runtime, got
        assert "C compiler" in msg and "apt-get install gcc" in msg and "xcode-select --install" in msg, msg


def test_cc_env_is_honoured(cache_dir, monkeypatch):
    gcc = shutil.which("gcc") or shutil.which("clang")
    if gcc is None:
        pytest.skip("no gcc/clang by that name")
    monkeypatch.setenv("CC", gcc)
    c._reset_for_tests()
    info = comp.compiler_info()
    assert info.path == gcc and info.resolved == os.path.realpath(gcc) and info.args == ()
    s = src("cc_env").replace("d[0] = 42", "d[0] = LS_VALUE")
    with pytest.raises(RuntimeError, match="LS_VALUE"):
        c.load_kernel(s)
    key = c.kernel_key(s)
    # extra words in $CC are passed to the compiler and are part of the key
    monkeypatch.setenv("CC", f"{gcc} -DLS_VALUE=7")
    c._reset_for_tests()
    assert comp.compiler_info().args == ("-DLS_VALUE=7",)
    assert c.kernel_key(s) != key
    assert call(c.load_kernel(s)) == 7


def test_compile_error(cache_dir):
    bad = "#include <stdint.h>\nint32_t ls_kernel(void **p, int64_t *d) { return undefined_name; }\n"
    with pytest.raises(RuntimeError) as ei:
        c.load_kernel(bad)
    msg = str(ei.value)
    assert isinstance(ei.value, comp.CompileError)
    assert "undefined_name" in msg and "error" in msg
    key = c.kernel_key(bad)
    saved = os.path.join(c.cache_info()["disk_dir"], key + ".c")
    assert saved in msg and open(saved).read() == bad
    info = c.cache_info()
    assert info["compile_errors"] == 1 and info["entries"] == 0 and info["compiles"] == 0
    with pytest.raises(RuntimeError):  # failures are not cached as kernels
        c.load_kernel(bad)
    assert not [n for n in os.listdir(info["disk_dir"]) if n.endswith((".so", ".tmp"))]


def test_libc_malloc_free_and_wrapping(cache_dir):
    s = ("#include <stdint.h>\n#include <stdlib.h>\n"
         "int32_t ls_kernel(void **p, int64_t *d) {\n"
         "    int64_t *buf = malloc(3 * sizeof(int64_t));\n"
         "    if (!buf) return 1;\n"
         "    buf[0] = 5; buf[1] = 6; buf[2] = 7;\n"
         "    p[0] = buf;\n"
         "    int32_t x = (int32_t)d[1];\n"
         "    d[0] = (int32_t)(x + 1);  /* wraps with -fwrapv */\n"
         "    return 0;\n}\n")
    k = c.load_kernel(s)
    p = c.ffi.new("void*[1]")
    d = c.ffi.new("int64_t[2]", [0, 2**31 - 1])
    assert k.fn(p, d) == 0
    assert d[0] == -(2**31)
    buf = c.ffi.cast("int64_t *", p[0])
    assert [buf[i] for i in range(3)] == [5, 6, 7]
    c.libc.free(p[0])


def test_openmp_kernel(cache_dir):
    if not c.openmp_available():
        pytest.skip("compiler without OpenMP")
    s = ("#include <stdint.h>\n#include <omp.h>\n"
         "int32_t ls_kernel(void **p, int64_t *d) {\n"
         "    int64_t s = 0;\n"
         "    #pragma omp parallel for reduction(+:s) num_threads(2)\n"
         "    for (int64_t i = 0; i < d[1]; i++) s += i;\n"
         "    d[0] = s;\n    return 0;\n}\n")
    k = c.load_kernel(s)
    d = c.ffi.new("int64_t[2]", [0, 1000])
    assert k.fn(c.ffi.NULL, d) == 0 and d[0] == 999 * 1000 // 2


def test_exit_while_openmp_threads_spin(cache_dir):
    # cffi closes its libraries at interpreter exit; when the last kernel was dlclose-d, libgomp
    # went with it while its workers still spun in it (OMP_WAIT_POLICY=active, or an exit right
    # after a parallel kernel): SIGSEGV at exit. Kernels are opened RTLD_NODELETE now.
    if not c.openmp_available():
        pytest.skip("compiler without OpenMP")
    env = dict(os.environ, OMP_WAIT_POLICY="active", GOMP_SPINCOUNT="infinite")
    r = run_child("""
        import json
        import numpy as np, scipy.sparse as sp
        import lazysparse as ls
        A = sp.random(4000, 4000, density=0.02, format="csr", random_state=0)
        x = np.arange(4000.0)
        ls.set_num_threads(2)
        for _ in range(3):
            y = (ls.asarray(A) @ x).materialize().todense()
        assert np.allclose(y, A @ x)
        print(json.dumps({"ok": True}))
    """, env=env)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {"ok": True}


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="no fork() here")
def test_forked_workers_after_threads():
    # libgomp keeps its pool's bookkeeping across fork() but not its threads: a child's first
    # parallel region waited forever (a multiprocessing pool under "fork" hung). A child of a
    # process that ran kernels on threads runs them on one, and says so when asked for more.
    r = run_child("""
        import json, multiprocessing as mp, warnings
        import numpy as np, scipy.sparse as sp
        import lazysparse as ls
        A = sp.random(3000, 3000, density=0.02, format="csr", random_state=1)
        x = np.linspace(0, 1, 3000)
        ls.set_num_threads(2)
        want = (ls.asarray(A) @ x).materialize().todense()

        def work(k):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                ls.set_num_threads(2)
            y = (ls.asarray(A) @ (x * k)).materialize().todense()
            return (np.allclose(y, A @ (x * k)), ls.get_num_threads(),
                    [str(m.message).split(":")[0] for m in w])

        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map(work, [1, 2, 3])
        print(json.dumps({"ok": bool(np.allclose(want, A @ x)), "got": got,
                          "parent": ls.get_num_threads()}))
    """, timeout=120)
    out = child_json(r)
    assert out["ok"] and out["parent"] == 2
    assert [g[:2] for g in out["got"]] == [[True, 1]] * 3
    assert all(g[2] == ["set_num_threads(2)"] for g in out["got"])


# ------------------------------------------------------------------------------------------------
# threads.py

def test_num_threads(monkeypatch):
    try:
        thr.set_num_threads(3)
        assert thr.get_num_threads() == 3
        for bad in (0, -1, 1.5, True, "2", None):
            with pytest.raises(ValueError, match="set_num_threads"):
                thr.set_num_threads(bad)
        assert thr.get_num_threads() == 3
        monkeypatch.setenv("LAZYSPARSE_NUM_THREADS", "4")
        thr._reset_for_tests()
        assert thr.get_num_threads() == 4
        monkeypatch.delenv("LAZYSPARSE_NUM_THREADS")
        thr._reset_for_tests()
        assert thr.get_num_threads() == 1
        monkeypatch.setenv("LAZYSPARSE_NUM_THREADS", "zero")
        with pytest.warns(RuntimeWarning, match="LAZYSPARSE_NUM_THREADS"):
            thr._reset_for_tests()
        assert thr.get_num_threads() == 1
    finally:
        monkeypatch.delenv("LAZYSPARSE_NUM_THREADS", raising=False)
        thr._reset_for_tests()
