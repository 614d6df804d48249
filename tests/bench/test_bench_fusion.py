"""The fused-kernel benchmark script (lazysparse/bench/fusion.py and its fusion_* modules) on a tiny
generated corpus: its oracles, its result check, its trial calls, and one whole run (results
verified, JSON layout)."""
from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest
import scipy.sparse as sp

from lazysparse.bench import checks, timing
from lazysparse.bench import fusion as bf
from lazysparse.bench import fusion_cases as fc
from lazysparse.bench import fusion_measure as fm
from lazysparse.bench import fusion_report as fr


def _tensor(rng, shape=(20, 5, 30), nnz=150):
    lin = np.unique(rng.integers(0, np.prod(shape), nnz))
    coords = np.array(np.unravel_index(lin, shape), dtype=np.int64)
    return coords, rng.random(lin.size), shape


def test_oracles_match_dense_numpy():
    rng = np.random.default_rng(1)
    A = sp.random_array((30, 40), density=0.1, format="csr", rng=rng)
    U, V = rng.random((30, 5)), rng.random((40, 5))
    S = fc.sddmm_np(A, U, V)
    assert np.allclose(S.toarray(), A.toarray() * (U @ V.T))
    assert (S.indices == A.indices).all() and (S.indptr == A.indptr).all()
    coords, data, shape = _tensor(rng)
    B, C = rng.random((shape[1], 3)), rng.random((shape[2], 3))
    X = np.zeros(shape)
    X[tuple(coords)] = data
    assert np.allclose(fc.mttkrp_np(coords, data, shape, B, C), np.einsum("ijk,jr,kr->ir", X, B, C))


def test_check_accepts_equal_and_rejects_wrong():
    rng = np.random.default_rng(2)
    A = sp.random_array((30, 30), density=0.1, format="csr", rng=rng)
    assert checks.check(A.copy(), A)
    assert checks.check(A.toarray(), A)               # a dense result against a sparse oracle
    B = A.copy()
    B.data[3] *= 1.001
    assert not checks.check(B, A)
    D = A.toarray()
    D[0, np.flatnonzero(D[0] == 0)[0]] = 1.0        # mass outside the oracle's pattern
    assert not checks.check(D, A)
    x = rng.random((4, 3))
    assert checks.check(x + 1e-9, x) and not checks.check(x * 1.01, x)
    assert not checks.check(x[:3], x)


def test_trials_budget_crash_and_wrong():
    expected = np.ones(3)
    ok = fm.trial_isolated(lambda: np.ones(3), expected, 5.0)
    assert ok["check"] == "ok" and ok["first_ms"] >= 0
    assert fm.trial_isolated(lambda: np.zeros(3), expected, 5.0)["check"] == "WRONG"
    t0 = time.perf_counter()
    slow = fm.trial_isolated(lambda: time.sleep(30), expected, 0.5)
    assert "budget" in slow["error"] and time.perf_counter() - t0 < 10
    died = fm.trial_isolated(lambda: os._exit(3), expected, 5.0)
    assert "died" in died["error"]
    err = fm.trial_isolated(lambda: 1 / 0, expected, 5.0)
    assert err["error"].startswith("ZeroDivisionError")
    assert "budget" in fm.trial_inprocess(lambda: time.sleep(0.3), expected, 0.1, retry=False)["error"]


def test_run_on_tiny_corpus(tmp_path):
    rng = np.random.default_rng(0)
    data = tmp_path / "data"
    data.mkdir()
    sp.save_npz(data / "tiny-square.npz", sp.random_array((60, 60), density=0.08, format="csr", rng=rng))
    sp.save_npz(data / "tiny-rect.npz", sp.random_array((40, 50), density=0.1, format="csr", rng=rng))
    coords, vals, shape = _tensor(rng)
    np.savez_compressed(data / "tiny-tensor.npz", coords=coords, data=vals, shape=np.array(shape))
    out = tmp_path / "res.json"
    args = bf.parse_args(["--data", str(data), "--min-nnz", "0", "--no-rmat", "--peers", "scipy",
                          "--repeat", "2", "--budget", "20", "--K", "4", "--R", "3",
                          "--scaling-nnz", "250", "--json", str(out)])
    import io
    buf = io.StringIO()
    res = bf.run(args, out=buf)
    text = buf.getvalue()
    for k in fc.KERNELS:
        assert f"\n{k}: times in ms" in text
    assert "summary" in text

    saved = json.loads(out.read_text())
    assert set(saved) == {"meta", "rows", "summary"}
    meta = saved["meta"]
    assert meta["threads"] == 1 and meta["versions"]["numpy"] and meta["peers"] == ["scipy"]
    rows = saved["rows"]
    # 2 matrices x (sddmm, gnn1, gnn2) + 1 tensor x mttkrp
    assert sorted((r["kernel"], r["input"]) for r in rows) == sorted(
        [(k, m) for k in fc.MATRIX_KERNELS for m in ("tiny-rect", "tiny-square")]
        + [("mttkrp", "tiny-tensor")])
    for r in rows:
        auto, scipy_ = r["cols"]["auto"], r["cols"]["scipy"]
        assert auto["check"] == "ok" and auto["median_ms"] > 0, r
        assert auto["rounds"] == 2 and auto["warmup_ms"] > 0, r
        assert scipy_["check"] == "ok" and scipy_["median_ms"] > 0, r
        assert r["best_peer"] == "scipy"
        assert r["best_peer_over_auto"] == pytest.approx(scipy_["median_ms"] / auto["median_ms"])
        for v in ("max", "none"):   # each ran and was right, or says why not
            col = r["cols"][v]
            assert col.get("check") != "WRONG", (r["kernel"], v, col)
            assert ("median_ms" in col) or col.get("error"), col
        if "median_ms" in r["cols"]["max"]:
            assert r["max_over_auto"] == pytest.approx(r["cols"]["max"]["median_ms"] / auto["median_ms"])
    summ = saved["summary"]
    assert summ["wrong"] == [] and summ["auto_failed"] == []
    # the machine's own two-thread scaling, measured in the same run
    assert set(summ["machine_scaling"]) == {"triad", "product", "triad_back_to_back", "product_back_to_back"}
    # the scaling criterion on the inputs with >= 250 entries: tiny-square (288), not tiny-rect (200)
    big = [r for r in rows if r["kernel"] in fr.SCALING_KERNELS and r["nnz"] >= 250]
    assert big and all(r["cols"]["auto@2"]["check"] == "ok" for r in big)
    for r in big:
        b = r["back_to_back"]
        assert b["auto"] > 0 and b["auto@2"] > 0
        assert r["auto1_over_auto2_back_to_back"] == pytest.approx(b["auto"] / b["auto@2"])
    for k in fr.SCALING_KERNELS:
        sc = summ[k]["scaling"]
        want = [r["auto1_over_auto2_back_to_back"] for r in big if r["kernel"] == k]
        assert sc["min"] == pytest.approx(min(want)) and len(sc["speedups"]) == len(want)
        assert sc["min_interleaved"] == pytest.approx(min(r["auto1_over_auto2"] for r in big if r["kernel"] == k))
    assert "back to back" in text and "(interleaved " in text
    assert all(v > 0 for v in summ["machine_scaling"].values()) and "machine: 2 threads over 1" in text
    for k in fc.KERNELS:
        po = summ[k]["best_peer_over_auto"]
        assert po["n"] == (1 if k == "mttkrp" else 2) and po["geomean"] > 0
        assert summ[k]["max_over_auto"]["target"] == fr.MAX_TARGETS[k]
    assert res["summary"]["sddmm"]["best_peer_over_auto"]["geomean"] == pytest.approx(po_geo(rows, "sddmm"))


def po_geo(rows, kernel):
    xs = [r["best_peer_over_auto"] for r in rows if r["kernel"] == kernel]
    return float(np.exp(np.mean(np.log(xs))))


def test_back_to_back_times_the_second_of_two_calls():
    calls = []

    def make(name, secs):
        def f():
            calls.append(name)
            time.sleep(secs)
        return f
    res = timing.measure_back_to_back({"a": make("a", 0.001), "b": make("b", 0.004), "bad": lambda: 1 / 0},
                                  repeat=3, budget_s=10.0)
    assert res["bad"]["error"].startswith("ZeroDivisionError")
    assert 1.0 <= res["a"]["median_ms"] < res["b"]["median_ms"]
    timed = calls[2:]                      # after the two first calls that set the rounds
    assert len(timed) == 12 and all(timed[i] == timed[i + 1] for i in range(0, 12, 2))
    calls.clear()   # a function slower than the budget allows gets fewer rounds
    res = timing.measure_back_to_back({"slow": make("slow", 0.05)}, repeat=5, budget_s=0.25)
    # (one first call, then two calls a round; a loaded machine stretches the first call, which
    # sets the rounds: at most 0.25 / 0.05, never the 5 asked for)
    rounds = (calls.count("slow") - 1) / 2
    assert rounds == int(rounds) and 1 <= rounds < 5
