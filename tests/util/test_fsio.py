"""fsio: temporary-name-then-rename writes that never replace what is not a regular file."""

from __future__ import annotations

import os

import pytest

from profiler_report.util.fsio import atomic_write, atomic_write_many


def test_replaces_a_regular_file_without_leaving_temporaries(tmp_path):
    dest = tmp_path / "a.json"
    dest.write_text("old")
    atomic_write(dest, "new")
    assert dest.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_symlink_is_followed_not_replaced(tmp_path):
    target = tmp_path / "target.xml"
    target.write_text("old")
    link = tmp_path / "link.xml"
    link.symlink_to(target)
    atomic_write(link, "new")
    assert link.is_symlink()
    assert target.read_text() == "new"


def test_a_fifo_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        atomic_write(fifo, "data")
        assert os.read(r, 100) == b"data"
    finally:
        os.close(r)
    assert not fifo.is_file() and fifo.exists()


def test_a_failure_before_the_renames_leaves_every_file_as_it_was(tmp_path):
    (tmp_path / "index.html").write_text("old html")
    (tmp_path / "summary.json").mkdir()  # cannot be replaced by a file
    with pytest.raises(OSError):
        atomic_write_many({tmp_path / "index.html": "new", tmp_path / "summary.json": "new"})
    assert (tmp_path / "index.html").read_text() == "old html"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "summary.json"]
