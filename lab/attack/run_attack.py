"""A bounded attack on the profiler-report CLI with hostile and broken inputs (not part of the tool).

Every case runs the CLI in a child process with a time limit and is classified:

- hang: the child ran past its limit (killed);
- exit70: an internal error;
- traceback: "Traceback" on stderr;
- untidy: a failing exit whose stderr does not end in one ``error:`` line, or an exit code that
  is not in the tool's table;
- wrong: the case has an oracle (what a correct tool must do) and the run broke it, e.g. exit 0
  on a capture whose counts are impossible, raw HTML in Markdown, a JUnit file that does not
  parse, a report lost after ``kill -9``;
- ok otherwise.

Inputs are the committed captures (tests/data) altered in tmp folders: mutated thresholds files,
raw-page CSVs and .ncu-rep files, case-folder payloads, injection payloads in names that reach
the outputs, and ``kill -9`` during renders. Random choices use a fixed seed.

    python3 lab/attack/run_attack.py [--seed 34] [--out lab/attack/results.json] [--quick]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
F32 = DATA / "h200_f32_4096"
F64 = DATA / "h200_f64_2048"
RANGE = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
CODES = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 70, 130}
LIMIT_S = 60.0


@dataclass
class Case:
    kind: str
    name: str
    args: list[str]
    oracle: Callable[[subprocess.CompletedProcess], str] | None = None  # "" when the run is right
    limit: float = LIMIT_S
    cwd: Path = ROOT


@dataclass
class Outcome:
    kind: str
    name: str
    verdict: str
    code: int | None
    seconds: float
    detail: str = ""


@dataclass
class Attack:
    work: Path
    rng: random.Random
    cases: list[Case] = field(default_factory=list)

    def add(self, kind: str, name: str, args: list[str], oracle: Callable | None = None,
            limit: float = LIMIT_S) -> None:
        self.cases.append(Case(kind, name, [str(a) for a in args], oracle, limit))


def cli(args: list[str], limit: float, cwd: Path = ROOT) -> tuple[subprocess.CompletedProcess | None, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "profiler_report", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, time.monotonic() - t0
    return subprocess.CompletedProcess(args, proc.returncode, out, err), time.monotonic() - t0


def classify(case: Case) -> Outcome:
    res, took = cli(case.args, case.limit, case.cwd)
    if res is None:
        return Outcome(case.kind, case.name, "hang", None, took)
    err = res.stderr
    if res.returncode == 70:
        return Outcome(case.kind, case.name, "exit70", 70, took, err.strip()[-200:])
    if "Traceback" in err:
        return Outcome(case.kind, case.name, "traceback", res.returncode, took, err.strip()[-200:])
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    if res.returncode not in CODES or (res.returncode not in (0, 1) and
                                       (not lines or not lines[-1].startswith("error: ")
                                        or sum(ln.startswith("error: ") for ln in lines) != 1)):
        return Outcome(case.kind, case.name, "untidy", res.returncode, took, err.strip()[-200:])
    why = case.oracle(res) if case.oracle else ""
    return Outcome(case.kind, case.name, "wrong" if why else "ok", res.returncode, took, why)


# ----------------------------------------------------------------------------------------------
# Oracles


def refused(*codes: int) -> Callable[[subprocess.CompletedProcess], str]:
    want = codes or (2,)
    return lambda r: "" if r.returncode in want else f"exit {r.returncode}, want {want}: {r.stdout[-120:]!r}"


def not_zero(r: subprocess.CompletedProcess) -> str:
    return "exit 0 on a broken input" if r.returncode == 0 else ""


def no_raw_html(r: subprocess.CompletedProcess) -> str:
    hit = re.search(r"<\s*(img|script|details|table|svg|iframe|b)\b", r.stdout, re.I)
    return f"raw HTML in Markdown: {hit.group()!r}" if hit else ""


# ----------------------------------------------------------------------------------------------
# Inputs


def records(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def write_records(rows: list[list[str]], path: Path) -> Path:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())
    return path


def csv_cases(a: Attack, n: int) -> None:
    base = records(F32 / "raw.csv")
    header, metrics = base[0], [i for i, h in enumerate(base[0]) if "__" in h or h.startswith("memory_")]
    values = ["-1", "-5e9", "nan", "inf", "-inf", "1e308", "", "abc", "0", "1,2,3", "\x00", "99999999999999999999999"]
    for i in range(n):
        rows = [list(r) for r in base]
        row, col = a.rng.randrange(2, len(rows)), a.rng.choice(metrics)
        value = a.rng.choice(values)
        rows[row][col] = value
        path = write_records(rows, a.work / f"cell{i}.csv")
        # A negative count or a value no float reads must not pass as a figure (exit 2 or not measured).
        oracle = refused(2) if value.startswith("-") and value not in ("-inf",) and "bytes" in header[col] else None
        a.add("raw.csv cell", f"{header[col]}={value!r} launch {rows[row][0]}", ["summary", path], oracle)
    for i, (what, edit) in enumerate(CSV_EDITS.items()):
        rows = edit([list(r) for r in base])
        path = write_records(rows, a.work / f"edit{i}.csv")
        a.add("raw.csv edit", what, ["check", path], refused(1, 2) if "below ideal" in what else None)


def _drop_col(name: str) -> Callable[[list[list[str]]], list[list[str]]]:
    def edit(rows: list[list[str]]) -> list[list[str]]:
        i = rows[0].index(name)
        return [r[:i] + r[i + 1:] for r in rows]
    return edit


def _below_ideal(rows: list[list[str]]) -> list[list[str]]:
    rows = _drop_col("derived__memory_l1_wavefronts_shared_excessive")(rows)
    rows[4][rows[0].index("memory_l1_wavefronts_shared")] = "1000000"
    return rows


CSV_EDITS: dict[str, Callable[[list[list[str]]], list[list[str]]]] = {
    "no units row": lambda r: [r[0], *r[2:]],
    "header only": lambda r: r[:2],
    "header twice": lambda r: [r[0], *r],
    "rows shuffled": lambda r: [r[0], r[1], *reversed(r[2:])],
    "one row short": lambda r: [*r[:3], r[3][:-5], *r[4:]],
    "no ID column": _drop_col("ID"),
    "no kernel name": _drop_col("Kernel Name"),
    "no duration": _drop_col("gpu__time_duration.sum"),
    "shared below ideal": _below_ideal,
    "every range empty": lambda r: [r[0], r[1], *[[*x[:r[0].index(RANGE)], "", *x[r[0].index(RANGE) + 1:]]
                                                  for x in r[2:]]],
}


def rep_cases(a: Attack, n: int) -> None:
    data = (F32 / "profile.ncu-rep").read_bytes()
    for i in range(n):
        b = bytearray(data)
        how = a.rng.choice(["flip", "cut", "zeros", "length", "garbage-tail"])
        if how == "flip":
            for _ in range(a.rng.randint(1, 64)):
                b[a.rng.randrange(8, len(b))] ^= 1 << a.rng.randrange(8)
        elif how == "cut":
            b = b[:a.rng.randrange(8, len(b))]
        elif how == "length":
            off = 8 + 2 + 4 + 131  # the third block's length field
            b[off:off + 4] = a.rng.randrange(2**32).to_bytes(4, "little")
        elif how == "garbage-tail":
            b += a.rng.randbytes(2**20)
        path = a.work / f"m{i}.ncu-rep"
        path.write_bytes(bytes(b))
        if how == "zeros":
            with path.open("r+b") as fh:
                fh.truncate(300 * 10**6)  # sparse: a header, the blocks, then zeros
        a.add(".ncu-rep", f"{how} #{i}", ["summary", path], limit=90)


def threshold_cases(a: Attack, n: int) -> None:
    text = (ROOT / "thresholds.toml").read_text()
    junk = ["", "[", "]", "=", '"', "\x00", "\x1b", "é", "1e999", "-", "*", "previous", "1e308 *", "<=", "\n[stage.",
            "optional = true\n", "[[stage]]", "{", "nan", "0x", "\\"]
    capture = F32 / "profile.ncu-rep"
    for i in range(n):
        t = text
        for _ in range(a.rng.randint(1, 4)):
            at = a.rng.randrange(len(t))
            t = t[:at] + a.rng.choice(junk) + t[at + a.rng.randint(0, 3):]
        path = a.work / f"t{i}.toml"
        path.write_text(t, encoding="utf-8", errors="surrogateescape")
        a.add("thresholds", f"mutation #{i}", ["check", capture, "--thresholds", path])
    named = {"typo optional": '[stage.vec_tuend]\noptional = true\nrules = ["shared_excessive_wavefronts == 0"]\n',
             "case optional": '[stage."VEC_PADDED"]\noptional = true\nrules = ["shared_excessive_wavefronts == 0"]\n',
             "overflow factor": '[stage.padded]\nrules = ["dram_read_bytes >= 1e308 * previous"]\n',
             "deep": "x = " + "[" * 5000 + "]" * 5000 + "\n",
             "deep inline": "x = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n"}
    for what, body in named.items():
        path = a.work / f"named-{len(a.cases)}.toml"
        path.write_text(body)
        a.add("thresholds", what, ["check", capture, "--thresholds", path], refused(2))


def case_folder_cases(a: Attack) -> None:
    base = a.work / "case-base"
    subprocess.run([sys.executable, "-m", "profiler_report", "new-case", str(base)], cwd=ROOT, check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    tails = ["import sys\nsys.exit(0)\n", "raise SystemExit(3)\n", "raise BaseException('x')\n",
             "import os\nos._exit(0)\n", "raise RecursionError\n", "CASE = 5\n", "raise MemoryError\n",
             "class X(BaseException):\n    pass\nraise X\n"]
    edits = [('source = "kernels.cu"', 'source = "/etc/passwd"'), ('source = "kernels.cu"', 'source = "../../x.cu"'),
             ('id = "vector"', 'id = "coalesced"'), ("factor = 4", "factor = 0"), ("factor = 4", "factor = -1"),
             ('source = "kernels.cu"', "source = 7"), ("expect = []", 'expect = "x"'), ('id = "vector"', "id = 1"),
             ('source = "kernels.cu"', 'source = "kernels.cu"\ntile = "x"'), ('kernel = "scale_vector"', "")]
    payloads: list[tuple[str, str, str, str]] = [("case.py", "", t, "append") for t in tails]
    payloads += [("stages.toml", old, new, "replace") for old, new in edits]
    payloads.append(("stages.toml", "", "x = " + "[" * 5000 + "]" * 5000 + "\n", "write"))
    for i, (file, old, new, how) in enumerate(payloads):
        folder = a.work / f"case{i}"
        shutil.copytree(base, folder)
        p = folder / file
        text = p.read_text()
        p.write_text(text + "\n" + new if how == "append" else new if how == "write" else text.replace(old, new, 1))
        cmd = ["check", F32 / "raw.csv", "--case", folder] if i % 2 else ["run", "--case", folder, "--no-counters",
                                                                          "--no-sanitize"]
        # os._exit(0) ends the interpreter itself: no tool can turn it into an error line.
        a.add("case folder", f"{file}: {new.strip()[:40]!r}", cmd, None if "os._exit" in new else refused(10))


IMG = '"><img src=x onerror=alert(1)>'


def injection_cases(a: Attack) -> None:
    rows = records(F32 / "raw.csv")
    rng_col, name_col = rows[0].index(RANGE), rows[0].index("Kernel Name")
    for r in rows[2:]:
        r[rng_col] = ""
    rows[2][name_col] = IMG
    rows[3][name_col] = "void <script>alert(1)</script>(float *)"
    rows[5][name_col] = "k`e``r\x1bnel<details>"  # unrolled's launch: padded's stays for the --stage below
    hostile = write_records(rows, a.work / "inj`x\x1b.csv")
    rules = a.work / "inj.toml"
    rules.write_text('[kernel."."]\nrules = ["shared_excessive_wavefronts >= 0"]\n')
    a.add("injection", "summary markdown", ["summary", hostile, "--format", "markdown"], no_raw_html)
    a.add("injection", "check markdown", ["check", hostile, "--thresholds", rules, "--format", "markdown",
                                          "--stage", "<table>=transpose_padded", "--stage", "x\x07=onerror"],
          no_raw_html)
    junit = a.work / "inj.xml"
    a.add("injection", "junit", ["check", hostile, "--thresholds", rules, "--junit", junit,
                                 "--stage", "bell\x07=transpose_padded", "--stage", "ok=onerror"],
          lambda r: _parses(junit))
    out = a.work / "inj-report"
    a.add("injection", "html page", ["render", "--from", hostile, "--out", out,
                                     "--stage", "<script>alert(2)</script>=transpose_padded", "--stage", "i=onerror"],
          lambda r: _escaped(out / "index.html"))


def _parses(path: Path) -> str:
    try:
        ET.parse(path)
    except (ET.ParseError, OSError) as exc:
        return f"JUnit not well-formed: {exc}"
    return ""


def _escaped(page: Path) -> str:
    if not page.is_file():
        return "no page"
    html = page.read_text()
    return "payload unescaped in the page" if "<script>alert(2)" in html or "<img src=x" in html else ""


def retest_cases(a: Attack) -> None:
    """The reproductions of the issue that are no single mutation."""
    rows = records(F32 / "raw.csv")
    partial = write_records([rows[0], rows[1], *[r for r in rows[2:] if r[0] not in ("2", "3")]],
                            a.work / "partial.csv")
    a.add("retest", "partial ladder", ["render", "--from", partial, "--out", a.work / "rp"], refused(5))
    lost = [list(r) for r in rows]
    lost[4][rows[0].index(RANGE)] = ""
    a.add("retest", "lost range", ["render", "--from", write_records(lost, a.work / "lost.csv"), "--out",
                                   a.work / "rl"], refused(5))
    a.add("retest", "mixed ladder", ["render", "--from", F32 / "raw.csv", "--from", F64 / "profile.ncu-rep",
                                     "--out", a.work / "rm"], refused(2))
    a.add("retest", "ceiling display name", ["summary", F32 / "profile.ncu-rep", "--stage",
                                             "n=void transpose_naive<float>", "--ceiling",
                                             r"c=void copy_tiled<float>\("], refused(0))
    for args in (["--ceiling", "c=copy", "--stage", "c=naive"], ["--stage", "a=naive", "--stage", "a=smem"]):
        a.add("retest", f"label twice {args}", ["summary", F32 / "raw.csv", *args], refused(2))
    for address in ("nonsense", "", "tcp://[::1", f"tcp://127.0.0.1:{_free_port()}"):
        a.add("retest", f"--scheduler {address!r}", ["bench", "--quick", "--out", a.work / "b.json",
                                                     "--scheduler", address], refused(2), limit=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_scheduler_case(a: Attack) -> Outcome:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=a.work)
    try:
        time.sleep(1.0)
        case = Case("retest", "--scheduler an http.server", ["bench", "--quick", "--out", str(a.work / "h.json"),
                                                             "--scheduler", f"tcp://127.0.0.1:{port}"], refused(2), 30)
        return classify(case)
    finally:
        server.kill()
        server.wait(10)


def kill_cases(a: Attack, n: int) -> list[Outcome]:
    """``kill -9`` a render at a random moment: the folder's earlier report must stay whole."""
    out = []
    for i in range(n):
        dest = a.work / f"kill{i}"
        first, _ = cli(["render", "--from", str(F32 / "raw.csv"), "--out", str(dest)], LIMIT_S)
        before = (dest / "index.html").read_bytes() if first and first.returncode == 0 else b""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "profiler_report", "render", "--from", str(F32 / "raw.csv"),
                                 "--out", str(dest)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(a.rng.uniform(0.5, 4.0))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        after = (dest / "index.html").read_bytes() if (dest / "index.html").is_file() else b""
        whole = bool(before) and after.rstrip().endswith(b"</html>") and len(after) > len(before) // 2
        out.append(Outcome("kill -9", f"render #{i}", "ok" if whole else "wrong", -9, 0.0,
                           "" if whole else "the earlier report is lost or cut"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--out", type=Path, default=ROOT / "lab" / "attack" / "results.json")
    ap.add_argument("--quick", action="store_true", help="a few cases of each kind")
    opts = ap.parse_args()
    k = 4 if opts.quick else 1
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attack-") as tmp:
        a = Attack(Path(tmp), random.Random(opts.seed))
        retest_cases(a)
        csv_cases(a, 40 // k)
        threshold_cases(a, 40 // k)
        rep_cases(a, 12 // k)
        case_folder_cases(a)
        injection_cases(a)
        outcomes = [classify(c) for c in a.cases]
        outcomes.append(http_scheduler_case(a))
        outcomes += kill_cases(a, 6 // k)
    counts = Counter(o.verdict for o in outcomes)
    by_kind = {kind: dict(Counter(o.verdict for o in outcomes if o.kind == kind))
               for kind in dict.fromkeys(o.kind for o in outcomes)}
    bad = [o.__dict__ for o in outcomes if o.verdict != "ok"]
    report = {"seed": opts.seed, "cases": len(outcomes), "wall_s": round(time.monotonic() - t0, 1),
              "counts": dict(counts), "by_kind": by_kind, "not_ok": bad,
              "slowest": sorted(([o.name, round(o.seconds, 1)] for o in outcomes), key=lambda x: -x[1])[:5]}
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(report, indent=1, ensure_ascii=True) + "\n")
    print(json.dumps({k_: report[k_] for k_ in ("cases", "wall_s", "counts", "by_kind")}, indent=1))
    for o in bad:
        print(f"{o['verdict']}: [{o['kind']}] {o['name']!r} exit {o['code']}: {o['detail'][:160]!r}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
