"""The hostile-case fuzzer (``hostile.py``) in its quick mode: the first cases of each family,
each in a process of its own, must all end ``ok`` (no wrong result, internal error, crash or
hang). The full run (``python tests/reliability/hostile.py --cases 5000``) is done by hand.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK = ("expressions", "inputs", "thread_counts", "threads", "cache_states", "signals", "work_budget")


def _fuzz(*args, timeout=600):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, os.path.join(HERE, "hostile.py"), *args], env=env,
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def test_quick_mode_every_case_ok():
    rc, out = _fuzz("--per-family", "4", "--families", *QUICK, "--seed", "7")
    assert rc == 0, out[-4000:]
    assert "| all | 28 | 0 | 0 | 0 | 0 |" in out, out[-2000:]


@pytest.mark.parametrize("family", ["expressions", "inputs"])
def test_the_fuzzer_sees_a_wrong_result(family, tmp_path):
    """A deliberately broken oracle check makes cases fail: the fuzzer can fail."""
    script = tmp_path / "broken.py"
    script.write_text(
        "import sys, numpy as np\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "import hostile\n"
        "orig = hostile.check\n"
        "def check(got, want, what, **kw):\n"
        "    want = np.asarray(want)\n"
        "    return orig(got, want + 1 if want.dtype != bool else ~want, what, **kw)\n"
        "hostile.check = check\n"
        f"sys.exit(hostile.main(['--per-family', '3', '--families', {family!r}, '--seed', '7']))\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "wrong" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


def test_the_fuzzer_reports_a_crash_and_a_hang(tmp_path):
    script = tmp_path / "crashy.py"
    script.write_text(
        "import os, signal, sys, time\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "import hostile\n"
        "hostile.FAMILIES['threads'] = lambda rng: os.kill(os.getpid(), signal.SIGSEGV)\n"
        "hostile.FAMILIES['thread_counts'] = lambda rng: time.sleep(60)\n"
        "sys.exit(hostile.main(['--per-family', '1', '--families', 'threads', 'thread_counts',\n"
        "                       '--timeout', '3']))\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    out = r.stdout
    assert r.returncode == 1, out
    assert "| threads | 0 | 0 | 0 | 1 | 0 |" in out and "| thread_counts | 0 | 0 | 0 | 0 | 1 |" in out, out
