"""The kernel cache against other users and other processes (lazysparse/runtime/kernel_cache.py,
toolchain.py): what it trusts, what it refuses, and that it neither hangs nor fails on what it
refuses.

* A directory above the cache that another user can write (no sticky bit), or that belongs to
  another user, makes the cache fall back to a private temporary folder, with a warning naming
  that directory; cc compiles a private copy of the source; the bytes hashed are the bytes
  loaded (a shared object swapped after its check is not what runs); and the whole attack by a
  second user, run for real where the tests run as root.
* A FIFO planted at an entry's metadata, shared object or lock, or at a compiler record, is
  refused without blocking (each case in a child process with a timeout: a regression fails
  instead of hanging the suite).
* A warm cache serves its kernels without a compiler; only a new kernel raises
  CompilerNotFoundError.
* ``CC`` naming no program warns (once) and the usual compilers are searched instead.
* The private fallback folder is deleted when the process exits.
* Entries vanishing in the middle of a build (another process's ``clear_cache(disk=True)``)
  neither fail the build nor send the process to a fallback folder.
"""
from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import warnings

import pytest

from test_cache import (_CHILD_LOAD, _IMPORT, ROOT, c, cache_dir, call, child_json,  # noqa: F401
                        comp, entry_files, give_away, run_child, src)


def _warned(fn):
    """(fn(), the messages of the RuntimeWarnings it raised)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]


def _evil_so(tmp_path, value=666) -> bytes:
    """A valid kernel library returning another value: what an attacker would plant."""
    s = tmp_path / f"evil{value}.c"
    s.write_text(src(f"evil{value}", value))
    out = tmp_path / f"evil{value}.so"
    comp.compile_shared(comp.compiler_info(c._probe_dir()), str(s), str(out))
    return out.read_bytes()


# ------------------------------------------------------------------------------------------------
# Code execution through a directory above the cache

@pytest.mark.parametrize("mode,refused", [(0o777, "group and others"), (0o770, "group"),
                                          (0o703, "others"), (0o1777, None), (0o755, None)],
                         ids=["all-writable", "group-writable", "other-writable", "sticky",
                              "private"])
def test_an_ancestor_others_can_write_is_refused(tmp_path, monkeypatch, mode, refused):
    """The cache is two levels below a directory of the given mode: with no sticky bit and
    group or others allowed to write it, a private temporary folder is used instead, and the
    warning names that directory and why."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)
    monkeypatch.setenv("LAZYSPARSE_CACHE_DIR", str(shared / "project" / "cache"))
    c._reset_for_tests()
    try:
        k, msgs = _warned(lambda: c.load_kernel(src("ancestor_%o" % mode)))
        assert call(k) == 42
        info = c.cache_info()
        if refused is None:
            assert msgs == [] and not info["fallback_dir"]
            assert info["disk_dir"].startswith(str(shared))
        else:
            assert info["fallback_dir"] and not info["disk_dir"].startswith(str(shared))
            assert any(str(shared) + " is writable by " + refused in m and "sticky" in m
                       and "temporary directory" in m for m in msgs), msgs
            assert os.path.dirname(k.path) == info["disk_dir"]
    finally:
        c._reset_for_tests()


def test_an_ancestor_reached_through_a_symlink_is_checked(tmp_path, monkeypatch):
    """LAZYSPARSE_CACHE_DIR goes through a symlink (of ours, in a private directory) to a
    directory others can write: the directory it leads to is what counts."""
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    (open_dir / "target").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(open_dir / "target")
    monkeypatch.setenv("LAZYSPARSE_CACHE_DIR", str(tmp_path / "link" / "cache"))
    c._reset_for_tests()
    try:
        k, msgs = _warned(lambda: c.load_kernel(src("ancestor_symlink")))
        assert call(k) == 42 and c.cache_info()["fallback_dir"]
        assert any(str(open_dir) + " is writable by" in m for m in msgs), msgs
    finally:
        c._reset_for_tests()


def test_an_ancestor_of_another_user_is_refused(tmp_path, monkeypatch):
    other = tmp_path / "theirs"
    other.mkdir(mode=0o755)
    os.chmod(other, 0o755)
    give_away(other)  # (skips unless root)
    monkeypatch.setenv("LAZYSPARSE_CACHE_DIR", str(other / "cache"))
    try:
        os.mkdir(other / "cache", 0o700)  # what its owner could have prepared for us
        c._reset_for_tests()
        k, msgs = _warned(lambda: c.load_kernel(src("ancestor_foreign")))
        assert call(k) == 42 and c.cache_info()["fallback_dir"]
        assert any(f"{other} belongs to uid" in m for m in msgs), msgs
    finally:
        c._reset_for_tests()


def test_cc_compiles_a_private_copy_of_the_source(cache_dir, monkeypatch):
    """What cc reads lies in a fresh 0700 folder of ours outside the cache, so a ``<key>.c``
    swapped in the cache before the compile (here: right before it) changes nothing."""
    s = src("private_copy")
    key = c.kernel_key(s)
    seen = []
    real = comp.compile_shared

    def compile_shared(info, src_path, out_path, extra=()):
        vdir = c.cache_info()["disk_dir"]
        st = os.stat(os.path.dirname(src_path))
        seen.append((src_path, out_path, stat.S_IMODE(st.st_mode), st.st_uid))
        with open(os.path.join(vdir, key + ".c"), "w") as f:  # the attacker's swap
            f.write(src("private_copy_evil", 666))
        return real(info, src_path, out_path, extra)

    monkeypatch.setattr(comp, "compile_shared", compile_shared)
    k = c.load_kernel(s)
    assert call(k) == 42
    (src_path, out_path, mode, uid), = seen
    vdir = os.path.realpath(c.cache_info()["disk_dir"])
    assert mode == 0o700 and uid == os.getuid()
    assert os.path.dirname(src_path) == os.path.dirname(out_path)
    assert not os.path.realpath(src_path).startswith(vdir + os.sep)
    assert not os.path.exists(os.path.dirname(src_path))  # removed once copied into the cache
    assert os.path.dirname(k.path) == c.cache_info()["disk_dir"]


@pytest.mark.parametrize("when", ["disk", "build"])
def test_the_bytes_verified_are_the_bytes_loaded(cache_dir, tmp_path, monkeypatch, when):
    """A shared object swapped for another (valid, other owner's code would do the same)
    between its checksum and its dlopen: the checked one runs. ``disk``: an entry found on
    disk; ``build``: one just compiled and written into the cache."""
    s = src("verified_" + when)
    evil = _evil_so(tmp_path)
    if when == "disk":
        child_json(run_child(_CHILD_LOAD.format(source=s)))
        c._reset_for_tests(compiler=False)
    real = c._dlopen
    swapped = []

    def dlopen(path, *args):
        tmp = path + ".swap"
        with open(tmp, "wb") as f:
            f.write(evil)
        os.chmod(tmp, 0o700)
        os.replace(tmp, path)
        swapped.append(path)
        return real(path, *args)

    monkeypatch.setattr(c, "_dlopen", dlopen)
    k = c.load_kernel(s)
    assert swapped == [k.path]
    assert call(k) == 42
    info = c.cache_info()
    assert (info["disk_hits"], info["compiles"]) == ((1, 0) if when == "disk" else (0, 1))


def test_loads_of_one_path_get_their_own_bytes(cache_dir, tmp_path, monkeypatch):
    """glibc hands back the library it loaded under a name it saw before, and descriptor
    numbers are reused: three entries (rewritten in place between loads, so one path and,
    unless the loader avoids it, one descriptor number) each run their own code."""
    s = src("one_path")
    child_json(run_child(_CHILD_LOAD.format(source=s)))
    _, meta, so = entry_files(cache_dir, c.kernel_key(s))
    values = []
    for v in (42, 7, 9):
        if v != 42:  # a new file at the same path (never rewritten in place: it is mapped)
            blob = _evil_so(tmp_path, v)
            with open(so + ".new", "wb") as f:
                f.write(blob)
            os.chmod(so + ".new", 0o700)
            os.replace(so + ".new", so)
            meta.update(so_size=len(blob), so_sha256=hashlib.sha256(blob).hexdigest())
            with open(os.path.join(os.path.dirname(so), meta["key"] + ".json"), "w") as f:
                json.dump(meta, f)
        c.clear_cache()
        values.append(call(c.load_kernel(s)))
    assert values == [42, 7, 9]
    assert c.cache_info()["disk_hits"] == 3


_VICTIM = """
import json, os, time, warnings
gate = {gate!r}
real = comp.compile_shared

def compile_shared(info, src_path, out_path, extra=()):  # an unlucky schedule: the attacker moves now
    with open(os.path.join(gate, "compiling"), "w") as f:
        f.write(src_path)
    t_end = time.time() + 15
    while not os.path.exists(os.path.join(gate, "go")) and time.time() < t_end:
        time.sleep(0.002)
    return real(info, src_path, out_path, extra)

comp.compile_shared = compile_shared
warnings.simplefilter("ignore")
k = c.load_kernel({source!r})
d = c.ffi.new("int64_t[4]")
k.fn(c.ffi.NULL, d)
print(json.dumps(dict(value=d[0], fallback=c.cache_info()["fallback_dir"], path=k.path)))
"""

# the attacker needs no Python (the interpreter under test may live where a new user cannot
# reach it, /root/.pyenv): a shell script
_ATTACKER = r"""
i=0
while [ ! -e "$GATE/compiling" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done
src=$(cat "$GATE/compiling")
if [ -d "$VDIR" ]; then mv "$VDIR" "$SHARED/stolen"; fi
mkdir "$VDIR" && chmod 777 "$VDIR"
printf '%s' "$EVIL" > "$VDIR/${src##*/}"
(printf '%s' "$EVIL" > "$src") 2>/dev/null
touch "$GATE/go"
"""


def _add_user(useradd, name):
    r = subprocess.run([useradd, "--no-create-home", "--home-dir", "/nonexistent", "--shell",
                        "/bin/false", "--user-group", name], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        pytest.skip(f"useradd {name} failed: {r.stderr.strip()}")
    return pwd.getpwnam(name)


def test_two_users_attack_through_the_directory_above_the_cache():
    """The full attack, by a real second user. The victim's LAZYSPARSE_CACHE_DIR is a folder
    both can write (mode 0777): while the victim compiles, the attacker moves the victim's
    version folder away, makes one of its own and puts a source there under the name the
    victim compiles. The victim must still get its own kernel, and the attacker's code (a
    constructor that leaves a file behind) must never run in the victim's process.

    Both users are created for the test; where the interpreter running the tests cannot be
    run by a new user (it lives under /root), the victim is this process's user, root: the
    worst case anyway."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("creating the users of the attack needs root")
    useradd, userdel = shutil.which("useradd"), shutil.which("userdel")
    if not (useradd and userdel):
        pytest.skip("useradd/userdel not available to create the users of the attack")
    tag = os.urandom(3).hex()
    made = []
    top = tempfile.mkdtemp(prefix="lazysparse-two-users-")
    try:
        attacker = _add_user(useradd, f"lsatk{tag}")
        made.append(attacker.pw_name)
        victim = _add_user(useradd, f"lsvic{tag}")
        made.append(victim.pw_name)
        os.chmod(top, 0o755)
        shared, gate = os.path.join(top, "shared"), os.path.join(top, "gate")
        for d in (shared, gate):
            os.mkdir(d)
            os.chmod(d, 0o777)
        marker = os.path.join(gate, "attacker-code-ran")
        assert re.fullmatch(r"[A-Za-z0-9_./-]+", marker)  # (spliced into C below)
        evil = ("#include <stdint.h>\n#include <stdio.h>\n"
                "__attribute__((constructor)) static void pwn(void) {\n"
                f"    FILE *f = fopen(\"{marker}\", \"w\"); if (f) fclose(f);\n}}\n"
                "int32_t ls_kernel(void **p, int64_t *d) { d[0] = 666; return 0; }\n")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
               "LAZYSPARSE_CACHE_DIR": shared, "PYTHONDONTWRITEBYTECODE": "1",
               "LANG": "C.UTF-8"}

        def start(pw, argv, extra=None):
            ids = {} if pw is None else dict(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
            return subprocess.Popen(argv, env=dict(env, **(extra or {})), cwd=ROOT,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    **ids)

        try:
            probe = start(victim, [sys.executable, "-c", _IMPORT])
            probe.communicate(timeout=60)
            if probe.returncode != 0:
                victim = None
        except PermissionError:
            victim = None
        code = _IMPORT + textwrap.dedent(_VICTIM.format(gate=gate, source=src("two_users")))
        v = start(victim, [sys.executable, "-c", code])
        a = start(attacker, ["/bin/sh", "-c", _ATTACKER],
                  dict(GATE=gate, SHARED=shared, VDIR=os.path.join(shared, "v" + c._version()),
                       EVIL=evil))
        v_out, v_err = v.communicate(timeout=60)
        a_out, a_err = a.communicate(timeout=60)
        assert a.returncode == 0, a_err
        assert v.returncode == 0, v_err
        out = json.loads(v_out.strip().splitlines()[-1])
        assert os.path.exists(os.path.join(gate, "go")), "the attack did not take place"
        assert not os.path.exists(marker), "the attacker's code ran in the victim's process"
        assert out["value"] == 42 and out["fallback"], out
        print("victim:", "root" if victim is None else victim.pw_name)
    finally:
        for name in made:
            subprocess.run([userdel, name], capture_output=True, timeout=30)
        shutil.rmtree(top, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# Planted FIFOs

def _fifo_at(path):
    if os.path.lexists(path):
        os.unlink(path)
    os.mkfifo(path, 0o600)


@pytest.mark.parametrize("where", ["json", "so", "probe", "lock", "last_compiler"])
def test_a_planted_fifo_never_hangs(cache_dir, tmp_path, where):
    """A FIFO in place of an entry's metadata, its shared object, its lock, the compiler probe's
    record or the last-compiler record: a new process still gets its kernel (the entry refused
    and rebuilt, the probe run again) or, without a compiler, the usual error; never a hang.
    (open() of a FIFO for reading blocks until a writer comes: forever.)"""
    s = src("fifo_" + where)
    built = child_json(run_child(_CHILD_LOAD.format(source=s)))
    assert built["compiles"] == 1
    key = c.kernel_key(s)
    vdir, meta, so = entry_files(cache_dir, key)
    records = [n for n in os.listdir(vdir) if n.startswith("compiler-") and n.endswith(".json")]
    env = None
    if where == "json":
        _fifo_at(os.path.join(vdir, key + ".json"))
    elif where == "so":
        _fifo_at(so)
    elif where == "lock":
        _unlink_all(vdir, (".json", ".so"))  # so that the child needs the lock: a build
        _fifo_at(os.path.join(vdir, key + ".lock"))
    elif where == "probe":
        (probe,) = [n for n in records if not n.startswith("compiler-last-")]
        _fifo_at(os.path.join(vdir, probe))
    else:
        (last,) = [n for n in records if n.startswith("compiler-last-")]
        _fifo_at(os.path.join(vdir, last))
        env = dict(_no_compiler_env(tmp_path))
    t0 = time.perf_counter()
    try:
        r = run_child(_CHILD_LOAD.format(source=s) if env is None else """
            import json
            try:
                c.load_kernel(%r)
                print(json.dumps({"raised": None}))
            except comp.CompilerNotFoundError as e:
                print(json.dumps({"raised": type(e).__name__}))
        """ % s, env=env, timeout=40)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a FIFO at the {where} file hung the process")
    out = child_json(r)
    if env is None:
        assert (out["rc"], out["value"]) == (0, 42)
    else:
        assert out["raised"] == "CompilerNotFoundError"
    if where in ("json", "so"):
        assert out["rejected"] == 1 and out["compiles"] == 1 and out["disk_hits"] == 0
    print(f"FIFO at {where}: {time.perf_counter() - t0:.2f} s")


def _unlink_all(vdir, suffixes=(".so", ".json", ".c", ".lock", ".tmp")):
    for n in os.listdir(vdir):
        if n.endswith(suffixes):
            try:
                os.unlink(os.path.join(vdir, n))
            except FileNotFoundError:
                pass


# ------------------------------------------------------------------------------------------------
# No compiler, and CC naming no program

def _no_compiler_env(tmp_path, cc=None):
    empty = tmp_path / "emptybin"
    empty.mkdir(exist_ok=True)
    env = dict(os.environ, PATH=str(empty))
    env.pop("CC", None)
    if cc is not None:
        env["CC"] = cc
    return env


_PUBLIC = """
import json, sys, warnings
sys.path.insert(0, {root!r})
import numpy as np, scipy.sparse as sp
import lazysparse as ls
from lazysparse.runtime import kernel_cache as c
A = sp.random(50, 40, density=0.2, format="csr", random_state=3)
x = np.arange(40.0)
lA = ls.asarray(A)
out = {{}}
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    y = (lA @ x).materialize().todense()
    out["right"] = bool(np.allclose(y, A @ x, rtol=1e-13))
    out["warm"] = c.load_kernel({old!r}).fn is not None
    try:
        c.load_kernel({new!r})
        out["new"] = None
    except Exception as e:
        out["new"] = [type(e).__name__, str(e)]
out["warnings"] = [str(m.message) for m in w]
out["info"] = {{k: v for k, v in c.cache_info().items() if k in ("compiles", "disk_hits")}}
print(json.dumps(out))
"""


@pytest.mark.parametrize("cc", [None, "/nonexistent/cc"], ids=["cc-unset", "cc-nowhere"])
def test_a_warm_cache_needs_no_compiler(cache_dir, tmp_path, cc):
    """Every kernel of ``A @ x`` on disk, then a process with no compiler on PATH (and CC unset,
    or naming nothing): the same expression gives the right answer; a new kernel raises
    CompilerNotFoundError with the install help."""
    code = _PUBLIC.format(root=ROOT, old=src("warm_no_cc"), new=src("warm_no_cc_new"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120, env=dict(os.environ, LAZYSPARSE_CACHE_DIR=str(cache_dir)))
    warm = child_json(r)
    assert warm["right"] and warm["new"] is None and warm["info"]["compiles"] >= 3
    code = _PUBLIC.format(root=ROOT, old=src("warm_no_cc"), new=src("warm_no_cc_new2"))
    env = dict(_no_compiler_env(tmp_path, cc), LAZYSPARSE_CACHE_DIR=str(cache_dir))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, timeout=120, env=env)
    out = child_json(r)
    assert out["right"] and out["warm"], out
    assert out["info"]["compiles"] == 0 and out["info"]["disk_hits"] >= 2
    name, msg = out["new"]
    assert name == "CompilerNotFoundError", out["new"]
    assert "C compiler" in msg and "apt-get install gcc" in msg
    if cc is not None:
        assert [m for m in out["warnings"] if cc in m and "CC" in m], out["warnings"]
        assert cc in msg


def test_a_remembered_compiler_from_another_machine_is_not_used(cache_dir, tmp_path):
    """The record of the last compiler holds the machine: copied to a machine of another CPU
    (a cache folder on a shared home), it is refused, and no kernel is looked up with it."""
    c.load_kernel(src("other_machine"))
    vdir = c.cache_info()["disk_dir"]
    (last,) = [n for n in os.listdir(vdir) if n.startswith("compiler-last-")]
    path = os.path.join(vdir, last)
    rec = json.loads(open(path).read())
    assert comp.remembered_compiler(vdir).identity == comp.compiler_info().identity
    rec["machine"] = "elsewhere"
    with open(path, "w") as f:
        json.dump(rec, f)
    comp._remembered.clear()
    assert comp.remembered_compiler(vdir) is None
    os.chmod(path, 0o666)  # and one that others could have written is not read at all
    comp._remembered.clear()
    assert comp.remembered_compiler(vdir) is None


def test_cc_naming_no_program_warns_once_then_searches(cache_dir, tmp_path, monkeypatch):
    """$CC names nothing: a RuntimeWarning naming the value, once, and cc/gcc/clang are used;
    with none of those either, CompilerNotFoundError names the value too."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no cc, gcc or clang on PATH")
    monkeypatch.setenv("CC", "/nonexistent/lazysparse-cc -O1")
    c._reset_for_tests()
    with pytest.warns(RuntimeWarning, match=r"CC environment variable \('/nonexistent/"
                                            r"lazysparse-cc -O1'\) names no program"):
        info = comp.compiler_info(c._probe_dir())
    assert info.path == os.path.abspath(cc) and info.args == ()
    assert call(c.load_kernel(src("cc_nowhere"))) == 42
    monkeypatch.setattr(comp, "_info", None)  # a second search in this process: no warning
    _, msgs = _warned(lambda: comp.compiler_info(c._probe_dir()))
    assert msgs == []
    monkeypatch.setenv("PATH", str(tmp_path))
    c._reset_for_tests()
    with pytest.warns(RuntimeWarning, match="lazysparse-cc"):
        with pytest.raises(comp.CompilerNotFoundError, match="lazysparse-cc") as ei:
            comp._find_compiler()
    assert "apt-get install gcc" in str(ei.value)


# ------------------------------------------------------------------------------------------------
# Fallback folders, vanishing entries

def test_the_fallback_folder_is_deleted_at_exit(tmp_path):
    """A process that fell back to a private temporary folder deletes it when it exits (a
    forked child that exits does not delete its parent's)."""
    (tmp_path / "file").write_text("x")
    env = dict(os.environ, LAZYSPARSE_CACHE_DIR=str(tmp_path / "file" / "cache"))
    out = child_json(run_child("""
        import json, os, warnings
        warnings.simplefilter("ignore")
        k = c.load_kernel(%r)
        d = c.ffi.new("int64_t[4]")
        k.fn(c.ffi.NULL, d)
        pid = os.fork()
        if pid == 0:
            raise SystemExit(0)  # a normal interpreter exit: atexit handlers run
        os.waitpid(pid, 0)
        info = c.cache_info()
        print(json.dumps(dict(value=d[0], dir=info["disk_dir"], fallback=info["fallback_dir"],
                              after_child=os.path.isdir(info["disk_dir"]))))
    """ % src("fallback_exit"), env=env))
    assert out["value"] == 42 and out["fallback"] and out["after_child"]
    assert os.path.basename(out["dir"]).startswith("lazysparse-cache-")
    assert not os.path.exists(out["dir"])


def _os_with(replace):
    proxy = types.ModuleType("os")
    proxy.__dict__.update(os.__dict__)
    proxy.replace = replace
    return proxy


@pytest.mark.parametrize("when", ["before_compile", "before_rename", "every_rename",
                                  "after_metadata"])
def test_entries_vanishing_mid_build(cache_dir, monkeypatch, when):
    """Another process empties the cache folder (``clear_cache(disk=True)``) in the middle of a
    build or a load: before the compile, between writing a file and renaming it into place (once,
    or every time), or between reading an entry's metadata and its shared object. The kernel is
    still built and right, with no error, no warning and no fallback folder."""
    s = src("vanish_" + when)
    vdir = os.path.join(cache_dir, "v" + c._version())
    wipes = []

    def wipe():
        wipes.append(when)
        _unlink_all(vdir)

    if when == "before_compile":
        real = comp.compile_shared

        def compile_shared(*a):
            wipe()
            return real(*a)

        monkeypatch.setattr(comp, "compile_shared", compile_shared)
    elif when in ("before_rename", "every_rename"):
        def replace(a, b, **k):
            if os.path.dirname(os.fspath(b)) == vdir and (when == "every_rename" or not wipes):
                wipe()
            return os.replace(a, b, **k)

        monkeypatch.setattr(c, "os", _os_with(replace))
    else:
        child_json(run_child(_CHILD_LOAD.format(source=s)))
        c._reset_for_tests(compiler=False)
        real_read = c._read_checked

        def read_checked(path, *a):
            out = real_read(path, *a)
            if path.endswith(".json") and not wipes:
                wipe()
            return out

        monkeypatch.setattr(c, "_read_checked", read_checked)
    k, msgs = _warned(lambda: c.load_kernel(s))
    assert call(k) == 42 and wipes
    info = c.cache_info()
    assert msgs == [] and not info["fallback_dir"] and info["compile_errors"] == 0
    assert info["compiles"] == 1
    if when == "every_rename":  # never in the cache: loaded from its private build folder
        assert not k.path.startswith(vdir) and os.path.isfile(k.path)
    else:  # and the entry left behind is sound (a new process: none of the patches above)
        out = child_json(run_child(_CHILD_LOAD.format(source=s)))
        assert (out["disk_hits"], out["compiles"], out["value"]) == (1, 0, 42)
