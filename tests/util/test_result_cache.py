"""The result store: keyed entries, hashes checked on read, LRU bound, XDG folder."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from profiler_report.util.result_cache import META, ResultCache, cache_root, digest, max_bytes


def test_root_follows_env_then_xdg_then_home(tmp_path: Path) -> None:
    assert cache_root({"PROFILER_REPORT_CACHE": str(tmp_path / "c")}) == tmp_path / "c"
    assert cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "profiler-report"
    assert cache_root({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "profiler-report"
    assert max_bytes({"PROFILER_REPORT_CACHE_MB": "2"}) == 2 * 2**20
    assert max_bytes({"PROFILER_REPORT_CACHE_MB": "nope"}) > 2**30


def test_digest_is_order_free() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})


def test_put_then_get_returns_the_files_and_info(tmp_path: Path) -> None:
    src = tmp_path / "x.bin"
    src.write_bytes(b"capture bytes")
    store = ResultCache(tmp_path / "cache")
    store.put("profile", {"stage": "naive", "source": "abc"}, {"n": 3}, {"x.bin": src, "y.json": b"{}"}, "c0ffee")
    got = store.get("profile", {"source": "abc", "stage": "naive"})
    assert got is not None and got.info == {"n": 3} and got.commit == "c0ffee" and got.date_utc.endswith("UTC")
    assert got.path("x.bin").read_bytes() == b"capture bytes" and got.path("y.json").read_bytes() == b"{}"
    assert store.notes == []


def test_a_key_change_is_a_miss(tmp_path: Path) -> None:
    store = ResultCache(tmp_path)
    store.put("validation", {"stage": "smem", "source": "v1"}, {"correct": True})
    assert store.get("validation", {"stage": "smem", "source": "v2"}) is None
    assert store.get("sanitizer", {"stage": "smem", "source": "v1"}) is None  # another kind
    assert store.notes == []


def test_a_corrupt_entry_is_a_miss_with_a_note_and_is_removed(tmp_path: Path) -> None:
    store = ResultCache(tmp_path)
    entry = store.put("profile", {"k": 1}, {}, {"profile.ncu-rep": b"real bytes"})
    entry.path("profile.ncu-rep").write_bytes(b"other bytes")  # same size class, wrong hash
    assert store.get("profile", {"k": 1}) is None
    assert len(store.notes) == 1 and "SHA-256" in store.notes[0] and "recomputed" in store.notes[0]
    assert not entry.folder.exists()
    entry = store.put("profile", {"k": 1}, {}, {"profile.ncu-rep": b"real bytes"})
    (entry.folder / META).write_text("{not json")
    assert store.get("profile", {"k": 1}) is None and "unreadable" in store.notes[-1]
    entry = store.put("profile", {"k": 1}, {}, {"profile.ncu-rep": b"real bytes"})
    entry.path("profile.ncu-rep").unlink()
    assert store.get("profile", {"k": 1}) is None and "missing" in store.notes[-1]


def test_a_stale_entry_under_the_same_digest_is_a_miss(tmp_path: Path) -> None:
    store = ResultCache(tmp_path)
    entry = store.put("peers", {"k": 1}, {})
    meta = json.loads((entry.folder / META).read_text())
    meta["key"] = {"k": 2}
    (entry.folder / META).write_text(json.dumps(meta))
    assert store.get("peers", {"k": 1}) is None and "stale" in store.notes[-1]


def test_fresh_reads_nothing_but_still_writes(tmp_path: Path) -> None:
    ResultCache(tmp_path).put("peers", {"k": 1}, {"v": 1})
    fresh = ResultCache(tmp_path, read=False)
    assert fresh.get("peers", {"k": 1}) is None
    fresh.put("peers", {"k": 1}, {"v": 2})
    got = ResultCache(tmp_path).get("peers", {"k": 1})
    assert got is not None and got.info == {"v": 2}


def test_bound_evicts_least_recently_used(tmp_path: Path) -> None:
    store = ResultCache(tmp_path, limit=10_000)
    for i in range(3):
        store.put("profile", {"i": i}, {}, {"f": b"x" * 3000})
        old = time.time() - 100 + i
        os.utime(store.get("profile", {"i": i}).folder / META, (old, old))  # type: ignore[union-attr]
    store.get("profile", {"i": 0})  # used now: the newest
    store.put("profile", {"i": 3}, {}, {"f": b"x" * 3000})  # over 10 000 bytes: the oldest use goes
    assert store.get("profile", {"i": 1}) is None
    assert all(store.get("profile", {"i": i}) is not None for i in (0, 3))
    assert store.size() <= 10_000


def test_entries_and_clear(tmp_path: Path) -> None:
    store = ResultCache(tmp_path)
    store.put("profile", {"i": 1}, {}, {"f": b"ab"})
    store.put("peers", {"i": 1}, {})
    assert sorted(e.kind for e in store.entries()) == ["peers", "profile"]
    assert store.entries("profile")[0].nbytes == 2
    assert store.clear("peers") == 1 and [e.kind for e in store.entries()] == ["profile"]
    assert store.clear() == 1 and store.entries() == []


def test_an_entry_larger_than_the_bound_is_kept_until_the_next_write(tmp_path: Path) -> None:
    store = ResultCache(tmp_path, limit=100)
    big = store.put("capture", {"i": 1}, {}, {"f": b"x" * 1000})
    assert big.folder.exists() and store.get("capture", {"i": 1}) is not None
    store.put("capture", {"i": 2}, {}, {"f": b"y" * 10})
    assert store.get("capture", {"i": 1}) is None and store.get("capture", {"i": 2}) is not None
