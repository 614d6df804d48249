"""The side-by-side of two checkouts: its report's ratios, geometric mean and worst case, and
how it reads each benchmark script's JSON."""
from __future__ import annotations

import math

import pytest

from lazysparse.bench import versions as V


def test_report_gives_ratios_geomean_and_worst(tmp_path):
    res = {"products": {"before": [{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 2.0}],
                        "after": [{"a": 2.0, "b": 1.0}, {"a": 2.0, "b": 3.0}]}}
    text = V.report(res, str(tmp_path))
    # medians: a 2.0 -> 2.0 (1.0), b 2.0 -> 2.0 (1.0); best rounds: a 1.0 -> 2.0, b 2.0 -> 1.0
    assert "| products | a | 2.000 | 2.000 | 1.000 | 2.000 |" in text
    assert "| products | b | 2.000 | 2.000 | 1.000 | 0.500 |" in text
    res["products"]["after"].append({"a": 4.0, "b": 1.0})   # a third round that differs
    res["products"]["before"].append({"a": 2.0, "b": 2.0})
    text = V.report(res, str(tmp_path))
    assert "| products | a | 2.000 | 2.000 | 1.000 | 2.000 |" in text
    assert "| products | b | 2.000 | 1.000 | 0.500 | 0.500 |" in text
    g = math.exp((math.log(1.0) + math.log(0.5)) / 2)
    assert f"medians: geometric mean after/before {g:.3f}, worst 1.000" in text
    assert "best rounds: 1.000, worst 2.000" in text
    assert "all, best: geometric mean 1.000, worst 2.000 (products: a), n=2" in text
    assert (tmp_path / "table.md").read_text().strip() == text.strip()


def test_cases_missing_from_a_round_are_left_out(tmp_path):
    res = {"spmv": {"before": [{"x": 1.0, "y": 1.0}], "after": [{"x": 2.0}]}}
    text = V.report(res, str(tmp_path))
    assert "| spmv | x |" in text and "| spmv | y |" not in text


@pytest.mark.parametrize("suite, doc, want", [
    ("fusion", {"rows": [{"kernel": "sddmm", "input": "cora", "param": {"K": 32},
                          "cols": {"auto": {"median_ms": 1.5}}},
                         {"kernel": "gnn1", "input": "cora", "param": None,
                          "cols": {"auto": {"error": "killed"}}}]},
     {'sddmm cora {"K": 32}': 1.5}),
    ("spmv", {"spmv": [{"name": "vt2010", "ls_ms": 0.2}]}, {"spmv vt2010 t": 0.2}),
    ("products", {"results": [{"kernel": "add3", "matrix": "cora", "lazysparse": {"median_ms": 0.6}},
                              {"kernel": "spgemm", "matrix": "cora", "lazysparse": {"error": "x"}}]},
     {"add3 cora": 0.6}),
])
def test_each_scripts_json_is_read(suite, doc, want):
    assert V.leaves(suite, doc) == want
