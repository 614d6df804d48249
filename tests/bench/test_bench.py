"""The side-by-side benchmark script (lazysparse/bench/suite.py) on a tiny R-MAT graph: results are
checked against scipy before timing, and ``--scaling`` times lazysparse on more threads in the
same rounds."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import lazysparse as ls
from lazysparse.bench import suite as bench


def test_scaling_column_times_lazysparse_on_more_threads(tmp_path):
    args = bench.parser().parse_args(["--no-data", "--rmat-scale", "8", "--kernels", "add_t", "spgemm",
                                      "--peers", "scipy", "--repeat", "2", "--scaling", "2",
                                      "--json", str(tmp_path / "b.json")])
    out_text = io.StringIO()
    with redirect_stdout(out_text):
        out = bench.run(args)
    text = out_text.getvalue()
    assert "ls@2" in text and "speedup" in text
    assert ls.get_num_threads() == 1  # put back after each timed call
    assert len(out["results"]) == 2
    for rec in out["results"]:
        assert rec["check"] == "ok"
        assert rec["lazysparse"]["median_ms"] > 0 and rec["scaled"]["ls@2"]["median_ms"] > 0
        assert rec["peers"]["scipy"]["median_ms"] > 0
    for kernel in ("add_t", "spgemm"):
        assert out["summary"][kernel]["geomean_speedup_ls@2"] > 0
    assert (tmp_path / "b.json").is_file()


def test_without_scaling_no_column():
    args = bench.parser().parse_args(["--no-data", "--rmat-scale", "6", "--kernels", "add_r",
                                      "--peers", "scipy", "--repeat", "1"])
    with redirect_stdout(io.StringIO()) as f:
        out = bench.run(args)
    assert "ls@" not in f.getvalue()
    assert "scaled" not in out["results"][0]
