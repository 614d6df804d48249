"""runtime/cpu_caches.py: the last-level cache read from a sysfs-like tree, and the threshold from
which segment sums stream their entries."""
from __future__ import annotations


import pytest

from lazysparse.runtime import cpu_caches as caches


def _tree(root, entries):
    for k, (level, kind, size) in enumerate(entries):
        d = root / f"index{k}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")


def test_the_highest_data_or_unified_level_counts(tmp_path):
    _tree(tmp_path, [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"),
                     (3, "Unified", "32768K")])
    assert caches.last_level_bytes(str(tmp_path)) == 32 << 20


def test_an_instruction_cache_alone_is_not_a_data_cache(tmp_path):
    _tree(tmp_path, [(1, "Data", "32K"), (4, "Instruction", "2M")])
    assert caches.last_level_bytes(str(tmp_path)) == 32 << 10


@pytest.mark.parametrize("size", ["", "12Q", "abc"])
def test_unreadable_sizes_give_none(tmp_path, size):
    _tree(tmp_path, [(2, "Unified", size)])
    assert caches.last_level_bytes(str(tmp_path)) is None


def test_no_tree_gives_none(tmp_path):
    assert caches.last_level_bytes(str(tmp_path / "absent")) is None


@pytest.mark.parametrize("raw, want", [("0", 0), ("1048576", 1 << 20), ("-5", 0)])
def test_the_environment_sets_the_threshold(monkeypatch, raw, want):
    monkeypatch.setenv("LAZYSPARSE_STREAM_MIN", raw)
    assert caches._stream_min() == want


def test_without_the_environment_half_the_last_level(monkeypatch):
    monkeypatch.delenv("LAZYSPARSE_STREAM_MIN", raising=False)
    monkeypatch.setattr(caches, "last_level_bytes", lambda: 32 << 20)
    assert caches._stream_min() == 16 << 20
    monkeypatch.setattr(caches, "last_level_bytes", lambda: None)
    assert caches._stream_min() == caches.DEFAULT
    monkeypatch.setenv("LAZYSPARSE_STREAM_MIN", "not a number")  # ignored, as unset
    assert caches._stream_min() == caches.DEFAULT
