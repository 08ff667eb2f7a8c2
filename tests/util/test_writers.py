"""util/writers.py: the output protocol (a Writer per format, a registry per command), and the
registries the commands use: every --format choice is a writer, and adding one is one entry."""

from __future__ import annotations

import pytest

from profiler_report.errors import InputError
from profiler_report.util.writers import Writer, Writers


def test_a_registry_dispatches_by_name_and_names_the_choices_on_a_bad_one():
    reg = Writers("demo", Writer("text", "", lambda x: f"t{x}", "plain"), Writer("json", "d.json", lambda x: f"j{x}"))
    assert reg.names() == ["text", "json"] and reg["json"].write(1) == "j1"
    assert reg.files(2) == {"d.json": "j2"} and reg.help() == "text: plain"
    with pytest.raises(InputError, match="demo has no format 'xml'") as err:
        reg["xml"]
    assert err.value.hint == "use one of text, json"
    with pytest.raises(ValueError):
        Writers("demo", Writer("a", "", str), Writer("a", "", str))


def test_the_commands_formats_are_their_registries():
    from click.testing import CliRunner

    from profiler_report.analysis.diff_output import DIFF
    from profiler_report.cli import main
    from profiler_report.gate.writers import CHECK
    from profiler_report.report.outputs import SUMMARY

    assert SUMMARY.names() == ["table", "csv", "json", "markdown", "agent"]
    assert CHECK.names() == ["table", "json", "markdown"]
    assert DIFF.names() == ["text", "csv", "json", "markdown"]
    assert [w.file_name for w in SUMMARY if w.file_name] == ["summary.csv", "summary.json"]  # render's data files
    for command, reg in (("summary", SUMMARY), ("check", CHECK), ("diff", DIFF)):
        out = CliRunner().invoke(main, [command, "--help"]).output
        assert f"[{'|'.join(reg.names())}]" in out and f"[default: {reg.names()[0]}]" in out
