"""The CLI on every bad input and fault: one stderr line, no traceback, the documented exit code,
and earlier reports untouched.

`run` cases use the GPU test doubles of tests/fakes.py (``python -c "import fakes; fakes.main()"``)
and fake ncu executables printing ncu 2025.3.1's real messages; nothing here is a measurement.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA, F32
from fakes import NCU_CONNECTED, NCU_NO_KERNELS, NCU_PERM, NCU_PROFILING, fake_ncu_printing, write_fake_ncu

from profiler_report import errors
from profiler_report.cli import EXIT_CODES

ROOT = Path(__file__).resolve().parents[2]
BAD = DATA / "bad"
CLI = [sys.executable, "-m", "profiler_report"]
FAKE_CLI = [sys.executable, "-c", "import fakes; fakes.main()"]


def cli(*args: str, fake: bool = False, env: dict[str, str] | None = None, timeout: float = 120,
        process: bool = False):
    """The console entry on ``args``: in this process (the same entry, exit code, stdout and
    stderr; no interpreter start) unless ``fake``, ``env`` or ``process`` ask for a child."""
    if not (fake or env or process):
        return _in_process(args)
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), **(env or {})}
    return subprocess.run([*(FAKE_CLI if fake else CLI), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=full_env)


def _in_process(args: tuple[str, ...]) -> subprocess.CompletedProcess:
    import contextlib
    import io

    from profiler_report.cli import entry

    out, err, cwd, argv = io.StringIO(), io.StringIO(), os.getcwd(), sys.argv
    os.chdir(ROOT)
    sys.argv = ["profiler-report", *map(str, args)]
    code: int | str | None = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            entry()
    except SystemExit as exc:
        code = exc.code
    finally:
        os.chdir(cwd)
        sys.argv = argv
    return subprocess.CompletedProcess([*CLI, *args], code if isinstance(code, int) else 1, out.getvalue(),
                                       err.getvalue())


def one_error_line(res: subprocess.CompletedProcess) -> str:
    """The stderr holds exactly one line, an error line, and no traceback."""
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def last_error_line(res: subprocess.CompletedProcess) -> str:
    """For `run`, progress lines may come first: exactly one error line, and it is the last."""
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    errors_ = [ln for ln in lines if ln.startswith("error: ")]
    assert len(errors_) == 1 and lines[-1] == errors_[0], res.stderr
    return errors_[0]


# --------------------------------------------------------------------------------------------
# Documented exit codes


def _table(text: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2).strip() for m in re.finditer(r"^\s*(\d+)\s{2,}(\S.*)$", text, re.M)}


def test_exit_codes_agree_in_errors_cli_and_readme():
    in_errors = dict(errors.EXIT_CODE_TABLE)
    in_cli = _table(EXIT_CODES)
    assert in_cli == in_errors
    assert set(in_errors) == set(in_cli) == {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 70, 130}
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Errors and exit codes"):]
    for code in in_cli:
        assert re.search(rf"^\|\s*{code}\s*\|", section, re.M), f"README lacks exit code {code}"
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, errors.ProfilerReportError):
            assert cls.exit_code in in_cli, cls


def test_help_lists_the_exit_codes_once_at_the_top():
    from click.testing import CliRunner

    from profiler_report.cli import main

    out = cli("--help").stdout
    assert "Exit codes" in out and "GPU performance counters not permitted" in out
    for cmd in ("run", "render", "summary", "check", "diff", "doctor", "bench"):
        out = CliRunner().invoke(main, [cmd, "--help"]).output  # the same click help, in this process
        assert "GPU performance counters not permitted" not in out, cmd  # not repeated
        assert "Exit codes: see `profiler-report --help`." in out, cmd


# --------------------------------------------------------------------------------------------
# Unreadable inputs: exit 2


@pytest.mark.parametrize("name", ["empty.ncu-rep", "empty.csv", "not_a_report.ncu-rep", "truncated.ncu-rep",
                                  "other_format.ncu-rep", "no_kernel_rows.csv"])
@pytest.mark.parametrize("command", ["summary", "render"])
def test_unreadable_capture(tmp_path, name, command):
    args = [command, str(BAD / name)] if command == "summary" else [
        command, "--from", str(BAD / name), "--out", str(tmp_path / "out")]
    res = cli(*args)
    assert res.returncode == 2
    one_error_line(res)
    assert not (tmp_path / "out" / "index.html").exists()


def test_a_directory_and_a_missing_file():
    assert "is a directory" in one_error_line(res := cli("summary", str(F32))) and res.returncode == 2
    assert "does not exist" in one_error_line(res := cli("summary", str(BAD / "nope.csv"))) and res.returncode == 2


def test_debug_shows_the_traceback():
    res = cli("--debug", "summary", str(BAD / "empty.csv"))
    assert res.returncode == 2 and "Traceback" in res.stderr


@pytest.mark.parametrize("name", ["raw_trimmed.csv", "missing_cells.csv", "rescaled_gbyte.csv",
                                  "columns_changed.csv", "quoted_names.csv", "two_processes.csv",
                                  "basic_like.csv", "details_trimmed.csv"])
def test_quirky_csv_renders(tmp_path, name):
    res = cli("render", "--from", str(BAD / name), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "index.html").read_text()
    assert "not measured" in html or name == "raw_trimmed.csv"


def test_basic_set_capture_lists_what_is_missing_and_how_to_collect_it(tmp_path):
    res = cli("render", "--from", str(BAD / "basic_like.csv"), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "index.html").read_text()
    top = html[: html.index('id="summary"')]
    assert "Metrics missing from this capture" in top and "--section SourceCounters" in top
    assert "not collected" in html


def test_bad_stage_regex_says_how_to_fix_it():
    res = cli("summary", str(F32 / "raw.csv"), "--stage", "naive=transpose_(naive")
    assert res.returncode == 2
    line = one_error_line(res)
    assert "bad regular expression" in line and "(fix: " in line


def _live_folder(folder: Path) -> Path:
    """A report folder as a live run leaves it (its page and its provenance say "live")."""
    folder.mkdir()
    (folder / "index.html").write_text("live page\n")
    (folder / "provenance.json").write_text('{"mode": "live"}\n')
    return folder


def test_render_refuses_to_replace_a_live_report_without_force(tmp_path):
    live = _live_folder(tmp_path / "live")
    res = cli("render", "--from", str(F32 / "raw.csv"), "--out", str(live))
    assert res.returncode == 2
    assert "--force" in one_error_line(res) and "live" in one_error_line(res)
    assert (live / "index.html").read_text() == "live page\n"
    res = cli("render", "--from", str(F32 / "raw.csv"), "--out", str(live), "--force")
    assert res.returncode == 0, res.stderr
    assert "Recorded capture" in (live / "index.html").read_text()


def test_render_writes_over_a_recorded_render(tmp_path):
    out = tmp_path / "rendered"
    for _ in range(2):  # the second render replaces the first: no live page is at stake
        assert cli("render", "--from", str(F32 / "raw.csv"), "--out", str(out)).returncode == 0


# --------------------------------------------------------------------------------------------
# run: ncu faults (3-7), no GPU (8), a wrong kernel (1), Ctrl-C (130)



def run_args(dest: Path, *extra: str) -> list[str]:
    return ["run", "--rows", "64", "--cols", "64", "--no-peers", "--no-sanitize", "--out", str(dest), *extra]


def test_ncu_not_found(earlier, tmp_path):
    res = cli(*run_args(earlier, "--ncu", str(tmp_path / "nope")), fake=True)
    assert res.returncode == 3
    assert "--ncu" in one_error_line(res)
    assert (earlier / "index.html").read_text() == "earlier report\n"


@pytest.mark.parametrize("lines, status, code, words", [
    ([NCU_CONNECTED, NCU_PERM], 1, 4, "run --no-counters"),
    ([NCU_CONNECTED, NCU_NO_KERNELS], 0, 5, "--nvtx-include pr_transpose.naive/"),
    ([NCU_CONNECTED, NCU_PROFILING, "==ERROR== An error was reported by the driver"], 9, 6, "status 9"),
])
def test_ncu_faults(earlier, tmp_path, lines, status, code, words):
    ncu = fake_ncu_printing(tmp_path / "bin", lines, status)
    res = cli(*run_args(earlier, "--ncu", str(ncu)), fake=True)
    assert res.returncode == code, res.stderr
    assert words in last_error_line(res)
    assert (earlier / "index.html").read_text() == "earlier report\n"
    assert "partial output kept in" in res.stderr


def test_ncu_timeout(earlier, tmp_path):
    ncu = write_fake_ncu(tmp_path / "bin", "sleep 30")
    res = cli(*run_args(earlier, "--ncu", str(ncu), "--ncu-timeout", "1"), fake=True)
    assert res.returncode == 7
    assert "timeout" in last_error_line(res)
    assert (earlier / "index.html").read_text() == "earlier report\n"


def test_no_gpu(earlier):
    from conftest import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU")
    res = cli(*run_args(earlier, "--no-counters"))
    assert res.returncode == 8
    one_error_line(res)
    assert (earlier / "index.html").read_text() == "earlier report\n"


def test_wrong_kernel_exits_1_after_writing_the_other_stages(earlier):
    res = cli(*run_args(earlier, "--no-counters"), fake=True, env={"FAKE_WRONG_STAGES": "smem"})
    assert res.returncode == 1
    assert "stage smem is wrong" in last_error_line(res)
    html = (earlier / "index.html").read_text()
    assert "unavailable (" in html and "incorrect" in html
    assert (earlier / "timings.json").is_file()


def test_ctrl_c_during_ncu_keeps_the_earlier_report(earlier, tmp_path):
    marker = tmp_path / "ncu-started"
    ncu = write_fake_ncu(tmp_path / "bin", f"touch {marker}\nsleep 30")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    proc = subprocess.Popen([*FAKE_CLI, *run_args(earlier, "--ncu", str(ncu))], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == "interrupted: earlier reports are untouched"
    assert "partial output kept in" in stderr
    assert (earlier / "index.html").read_text() == "earlier report\n"


def test_doctor_prints_one_line_per_check_and_a_documented_code():
    res = cli("doctor")
    assert res.returncode in (0, 2, 3, 4, 8), res.stderr
    lines = res.stdout.strip().splitlines()
    assert all(re.match(r"^(ok|warning|unknown|skipped|PROBLEM)\s+\S", ln) for ln in lines[:-1]), lines
    assert lines[-1].startswith(("ok:", "a live run cannot work yet"))


@pytest.mark.parametrize("args", [("run", "--rows", "0"), ("run", "--size", "rows=0", "--size", "cols=0"),
                                  ("sweep", "--size", "rows=0,cols=0", "--out", "OUT", "--ncu", "/bin/true")])
def test_a_zero_size_is_bad_input_before_any_gpu_or_ncu(tmp_path, args):
    # 0 once fell back to the case's default size (a falsy value): sweep profiled 8192x8192 instead.
    res = cli(*[str(tmp_path / "sw") if a == "OUT" else a for a in args])
    assert res.returncode == 2, res.stderr
    assert "size must be positive, got 0x" in res.stderr and "(fix: " in res.stderr
    one_error_line(res)
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize(("args", "message"), [
    (("run", "--size", "rows=4096", "--rows", "8192"), "--size rows=4096 and --rows 8192 disagree"),
    (("run", "--size", "rows=64", "--size", "rows=128"), "--size gives rows twice: 64 and 128"),
    (("run", "--profile-size", "cols=64", "--profile-cols", "96"),
     "--profile-size cols=64 and --profile-cols 96 disagree"),
    (("run", "--profile-size", "cols"), "--profile-size 'cols' is not DIM=N"),
])
def test_a_dimension_given_two_ways_is_bad_input(tmp_path, args, message):
    # --rows once silently won over --size rows=N.
    res = cli(*args, "--out", str(tmp_path / "r"))
    assert res.returncode == 2, res.stderr
    assert message in one_error_line(res) and "(fix: " in res.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("value", ["rows=²", "rows=٣", "rows=５"])
def test_a_size_of_non_ascii_digits_is_bad_input(value):
    # '²'.isdigit() is true and int('²') raises: it was exit 70.
    res = cli("run", "--size", value)
    assert res.returncode == 2, res.stderr
    assert "is not DIM=N with N >= 0" in one_error_line(res)


def test_run_out_that_is_a_file_is_refused_before_any_gpu_work(tmp_path):
    # atomic_dir once moved such a file aside to <file>.old and failed after the whole run.
    target = tmp_path / "afile"
    target.write_text("mine\n")
    res = cli("run", "--out", str(target), "--no-counters")
    assert res.returncode == 2, res.stderr
    assert "is a file, not a folder" in one_error_line(res)
    assert target.read_text() == "mine\n" and not (tmp_path / "afile.old").exists()


@pytest.mark.parametrize(("args", "message"), [
    (("--ncu-timeout", "-1"), "--ncu-timeout must be a positive number of seconds, got -1.0"),
    (("--ncu-timeout", "nan"), "--ncu-timeout must be a positive number of seconds, got nan"),
    (("--sanitize-timeout", "0"), "--sanitize-timeout must be a positive number of seconds, got 0.0"),
    (("--repeats", "0"), "--repeats must be at least 20"),
    (("--stages", "bogus"), "unknown stage 'bogus'"),
])
def test_run_options_are_checked_before_the_gpu_is_asked_for(args, message):
    # Without --out these reached device_info first (exit 8) or were never checked.
    res = cli("run", *args)
    assert res.returncode == 2, res.stderr
    assert message in one_error_line(res) and "(fix: " in res.stderr


def test_a_sweep_that_is_not_a_bench_json_is_refused_before_the_run(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = cli("run", "--sweep", str(bad))
    assert res.returncode == 2, res.stderr
    assert f"cannot read {bad}" in one_error_line(res)
    bad.write_text(json.dumps({"timings": []}))
    res = cli("run", "--sweep", str(bad))
    assert res.returncode == 2 and "is not a sweep.json written by profiler-report" in one_error_line(res)


@pytest.mark.parametrize(("stages", "message"), [("naive,smem,naive", "--stages names naive twice"),
                                                 ("naive,copy", "--stages names copy, the ceiling")])
def test_stages_that_would_be_reported_twice_are_bad_input(stages, message):
    # Each would have written two timings of one name after the whole run.
    res = cli("run", "--stages", stages)
    assert res.returncode == 2, res.stderr
    assert message in one_error_line(res) and "(fix: " in res.stderr


def test_an_empty_case_name_is_an_unknown_case():
    # "" was taken as the current folder (exit 10: "case.py is missing").
    res = cli("run", "--case", "")
    assert res.returncode == 2, res.stderr
    assert "unknown case ''" in one_error_line(res)
