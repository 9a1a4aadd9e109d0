"""Benchmark: `bake snapshot --target` checks per second against wrk on the same check route.

    python bench/target_bench.py [--states 50] [--partners 1000] [--seconds 5] [--repeat 3]
                                 [--service auto|serve|stand-in] [--profile-rows 500000]
                                 [--profile-only] [--questions-only] [--shadow]

One run does everything:
1. generates the fixtures (tests/support/gen_fixtures.py) into bench/.data/ (git-ignored);
2. starts the service on a free loopback port with uvicorn: `compliance-bake serve` with a key
   from `compliance-bake keys mint` when this build has `serve` (auto), else the stand-in
   (bench/stand_in_service.py: raw ASGI over the same Engine, the floor of a Python service);
3. --repeat times, paired: wrk (Debian package `wrk`; 1 thread, 32 connections, --seconds) on
   the check route with the agent key, for a licensed partner; then the whole
   `compliance-bake bake snapshot --target URL` command on the states x partners matrix, timed
   from start to exit (start-up, fixtures, board, matrix, signing, validation, writing);
   then the matrix alone, `HttpTarget.check_many` in this process;
4. prints each pair and the median ratios. Target: the bake at least 0.7x wrk's rate;
5. the cost of a target profile: the whole `bake snapshot --target` on --profile-rows rows
   (50 states) against the stand-in, once through the built-in profile (GET, flat answer) and
   once through a profile with a POST, a JSON body and a nested answer (the Bun service's shape
   of docs/target-profiles.md), in the same run; CPU (user + sys of the bake process) and wall
   time. Target: the profiled bake at most 1.15x the built-in one, CPU and wall.
6. the policy's questions: the same matrix with a limit row per state (bench/policy_bench.py's
   rows: maximum, fractional minimum, bet types, minimum age, ZIP prefixes on every other
   state, a partner's own row per hundred partners), --repeat times, paired: wrk on the check
   route with a boundary question's parameters (the maximum, with bet type, age and ZIP),
   then the whole `bake snapshot --target URL` through the built-in profile, which asks every
   boundary question beside the matrix. The bake's rate counts every request it sends (the
   board's five, the matrix, the questions); CPU (user + sys) and wall of each bake are
   printed. Target: the bake at least 0.7x wrk's rate.
Exits 1 if a target is missed. --profile-only runs step 5 alone (no wrk needed),
--questions-only step 6 alone. --shadow bakes
step 3 through the built-in profile with a `[shadow]` that asks the same check route (`serve` has
no shadow mode of its own): two questions per pair, and the bake's rate counts both.

The machine is shared by wrk or the baker and the service, so the ratios, measured in the same
run and paired, are what to read; the absolute rates move with the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

from bench.policy_bench import write_limits  # noqa: E402
from compliance_bake.inputs.fixtures import load_fixtures  # noqa: E402
from compliance_bake.policy.amounts import amount_json  # noqa: E402
from compliance_bake.policy.questions import Kind, boundary_questions  # noqa: E402
from compliance_bake.targets.http import HttpSettings, HttpTarget  # noqa: E402
from compliance_bake.targets.interface import CheckRequest  # noqa: E402
from tests.support.gen_fixtures import generate, write_fixtures  # noqa: E402

TARGET_RATIO = 0.7
PROFILE_RATIO = 1.15
PROFILE_STATES = 50
# The Bun service's shape (docs/target-profiles.md), as the stand-in also answers it.
NESTED_PROFILE = """
[auth]
header = "X-Agent-Key"
value = "{key}"

[health]
path = "/health"
ok = "body.ok"
states = "body.states"
runtime = "body.runtime"

[check]
method = "POST"
path = "/v2/wagers/eligibility"
body = { nodeId = "{partner}", stateCode = "{state}", wager = { type = "{wagerType}" } }
answers = [200]
allowed = "body.data.allowed"
status = "body.data.status"
reason = "body.data.reason"

[status]
path = "/api/compliance/status"
query = { state = "{state}", partner = "{partner}" }
ok = "body.ok"
state = "body.state"
licenseStatus = "body.licenseStatus"
hasLimits = "body.hasLimits"
"""
KEY_PATTERN = re.compile(r"\b[a-z0-9]{5}\.[A-Za-z0-9_-]{43}\b")
SECRET = "bench-secret-0123456789abcdef0123456789abcdef"
# What a bake asks besides the matrix and the questions: /health twice, the board's two checks,
# the status panel (tests/targets/test_http_target.py counts the checks).
BOARD_REQUESTS = 5


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _has_serve() -> bool:
    from compliance_bake.cli.main import cli

    return "serve" in cli.commands


def _start(kind: str, fixtures: Path, work: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    port = _free_port()
    env = dict(os.environ, REPORT_SIGNING_SECRET=SECRET)
    if kind == "serve":
        minted = subprocess.run(
            [sys.executable, "-m", "compliance_bake", "keys", "mint"],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            check=True,
        )
        found = KEY_PATTERN.search(minted.stdout + minted.stderr)
        if found is None:
            raise SystemExit("keys mint printed no key")
        key = found.group(0)
        command = [sys.executable, "-m", "compliance_bake", "serve", "--fixtures", str(fixtures)]
        command += ["--host", "127.0.0.1", "--port", str(port), "--out", str(work / "served")]
    else:
        key = "bench." + secrets.token_urlsafe(32)
        env |= {"STAND_IN_FIXTURES": str(fixtures), "STAND_IN_KEY": key, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "uvicorn", "bench.stand_in_service:app", "--port"]
        command += [str(port), "--log-level", "warning", "--no-access-log"]
    process = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(base + "/health", timeout=1):
                return process, base, key
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the {kind} service did not start") from None
            time.sleep(0.1)


def _wrk(url: str, key: str, seconds: int) -> float:
    done = subprocess.run(
        ["wrk", "-t1", "-c32", f"-d{seconds}s", "-H", f"Authorization: Bearer {key}", url],
        capture_output=True,
        text=True,
        check=True,
    )
    if "Non-2xx" in done.stdout:
        raise SystemExit(f"wrk got errors from {url}:\n{done.stdout}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", done.stdout).group(1))  # type: ignore[union-attr]


def _bake(base: str, key: str, fixtures: Path, out: Path, *extra: str) -> float:
    return _timed_bake(base, key, fixtures, out, *extra)[0]


def _timed_bake(base: str, key: str, fixtures: Path, out: Path, *extra: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the bake process: user + sys) of one whole bake."""
    env = dict(os.environ, REPORT_SIGNING_SECRET=SECRET, COMPLIANCE_AGENT_KEY=key)
    command = [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--target", base]
    command += ["--fixtures", str(fixtures), "--out", str(out), "--json", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the bake failed ({done.returncode}): {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def _profile_cost(rows: int, work: Path) -> bool:
    """The built-in profile against a POST/JSON/nested one, same service, same run."""
    partners = max(1, rows // PROFILE_STATES)
    fixtures = BENCH_DIR / ".data" / f"target-{PROFILE_STATES}x{partners}"
    write_fixtures(fixtures, *generate(PROFILE_STATES, partners, 0))
    profile = work / "nested.toml"
    profile.write_text(NESTED_PROFILE)
    print(f"profile cost: {PROFILE_STATES} x {partners} = {PROFILE_STATES * partners} rows")
    process, base, key = _start("stand-in", fixtures, work)
    try:
        wall_b, cpu_b = _timed_bake(base, key, fixtures, work / "out-builtin")
        print(f"  built-in profile (GET, flat):          wall {wall_b:.1f} s, CPU {cpu_b:.1f} s")
        wall_p, cpu_p = _timed_bake(
            base, key, fixtures, work / "out-profiled", "--target-profile", str(profile)
        )
        print(f"  profiled (POST, JSON body, nested):    wall {wall_p:.1f} s, CPU {cpu_p:.1f} s")
    finally:
        process.terminate()
        process.wait(timeout=30)
    cpu_ratio, wall_ratio = cpu_p / cpu_b, wall_p / wall_b
    print(
        f"  ratio profiled / built-in: CPU {cpu_ratio:.2f}x, wall {wall_ratio:.2f}x "
        f"(target <= {PROFILE_RATIO}x)"
    )
    return cpu_ratio <= PROFILE_RATIO and wall_ratio <= PROFILE_RATIO


def _matrix(base: str, key: str, requests: list[CheckRequest]) -> float:
    with HttpTarget(base, key, HttpSettings()) as target:
        target.runtime()  # connect first
        started = time.perf_counter()
        answered = sum(1 for _ in target.check_many(requests))
        elapsed = time.perf_counter() - started
    assert answered == len(requests)
    return elapsed


def _shadow_profile(work: Path) -> Path:
    """The built-in profile with a `[shadow]` asking the check route again: two questions per
    pair, as a service with its own shadow mode is asked (docs/target-profiles.md)."""
    from compliance_bake.targets.profile_file import builtin_text

    text = builtin_text()
    check = text[text.index("[check]") : text.index("[status]")]
    path = work / "shadow.toml"
    path.write_text(text + "\n" + check.replace("[check]", "[shadow]", 1))
    return path


def _question_query(fixtures: Path) -> tuple[str, int]:
    """The check route's query for a boundary question the registry allows (the maximum, with
    a bet type, an age and a ZIP), and how many questions a bake asks."""
    policy = load_fixtures(fixtures).policy
    asked = boundary_questions(policy, int(time.time()))
    question = next(q.question for q in asked if q.kind == Kind.MAX and q.question.zip_code)
    assert question.amount is not None
    fields = {
        "partner": question.partner,
        "state": question.state,
        "wagerType": question.wager_type,
        "sport": question.sport,
        "market": question.market,
        "amount": str(amount_json(question.amount)),
        "betType": question.bet_type,
        "age": str(question.age),
        "zipCode": question.zip_code,
    }
    return urllib.parse.urlencode(fields), len(asked)


def _questions(args: argparse.Namespace, kind: str) -> bool:
    """Step 6: wrk on a boundary question against the whole bake that asks every one."""
    fixtures = BENCH_DIR / ".data" / f"questions-{args.states}x{args.partners}"
    write_fixtures(fixtures, *generate(args.states, args.partners, 0))
    write_limits(fixtures)
    query, questions = _question_query(fixtures)
    requests = BOARD_REQUESTS + args.states * args.partners + questions
    print(f"questions: {questions} boundary questions; {requests} requests per bake")
    ratios = []
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        process, base, key = _start(kind, fixtures, work)
        try:
            for run in range(1, args.repeat + 1):
                wrk_rate = _wrk(f"{base}/api/compliance/check?{query}", key, args.seconds)
                wall, cpu = _timed_bake(base, key, fixtures, work / f"out{run}")
                ratios.append(requests / wall / wrk_rate)
                print(
                    f"run {run}: wrk (a question) {wrk_rate:,.0f} req/s | bake snapshot --target "
                    f"{requests / wall:,.0f} questions/s ({ratios[-1]:.2f}x), wall {wall:.1f} s, "
                    f"CPU {cpu:.1f} s"
                )
        finally:
            process.terminate()
            process.wait(timeout=30)
    ratio: float = statistics.median(ratios)
    print(f"median: bake with questions {ratio:.2f}x wrk (target >= {TARGET_RATIO}x)")
    return ratio >= TARGET_RATIO


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=50, help="states in the matrix (50)")
    parser.add_argument("--partners", type=int, default=1000, help="partners (1000)")
    parser.add_argument("--seconds", type=int, default=5, help="seconds of each wrk run (5)")
    parser.add_argument("--repeat", type=int, default=3, help="paired runs (3)")
    parser.add_argument("--service", choices=["auto", "serve", "stand-in"], default="auto")
    parser.add_argument("--profile-rows", type=int, default=500_000, help="rows (500000)")
    parser.add_argument("--profile-only", action="store_true", help="only the profile cost")
    parser.add_argument("--shadow", action="store_true", help="bake with [shadow]: 2 asks a pair")
    parser.add_argument("--questions-only", action="store_true", help="only the questions")
    args = parser.parse_args(argv)
    if args.profile_only:
        with tempfile.TemporaryDirectory() as temp:
            return 0 if _profile_cost(args.profile_rows, Path(temp)) else 1
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed (Debian: apt-get install wrk)")
    kind = args.service if args.service != "auto" else ("serve" if _has_serve() else "stand-in")
    if args.questions_only:
        return 0 if _questions(args, kind) else 1

    fixtures = BENCH_DIR / ".data" / f"target-{args.states}x{args.partners}"
    write_fixtures(fixtures, *generate(args.states, args.partners, 0))
    registry = load_fixtures(fixtures).registry
    requests = [
        CheckRequest(p.node_id, s.code, s.wager_types[0])
        for s in registry.states
        for p in registry.partners
    ]
    licensed = next(p.node_id for p in registry.partners if p.licences.get("MA") == "active")
    checks = len(requests)
    print(f"service: {kind}; matrix {args.states} x {args.partners} = {checks} checks")

    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        process, base, key = _start(kind, fixtures, work)
        route = f"{base}/api/compliance/check?partner={licensed}&state=MA&wagerType="
        wager = registry.state("MA").wager_types[0]  # type: ignore[union-attr]
        bake_ratios, matrix_ratios = [], []
        extra = ("--target-profile", str(_shadow_profile(work))) if args.shadow else ()
        asked = checks * (2 if args.shadow else 1)
        if args.shadow:
            print(f"with [shadow]: {asked} questions per bake (two per pair)")
        try:
            for run in range(1, args.repeat + 1):
                wrk_rate = _wrk(route + wager, key, args.seconds)
                bake_rate = asked / _bake(base, key, fixtures, work / f"out{run}", *extra)
                matrix_rate = checks / _matrix(base, key, requests)
                bake_ratios.append(bake_rate / wrk_rate)
                matrix_ratios.append(matrix_rate / wrk_rate)
                print(
                    f"run {run}: wrk {wrk_rate:,.0f} req/s | bake snapshot --target "
                    f"{bake_rate:,.0f} checks/s ({bake_ratios[-1]:.2f}x) | matrix alone "
                    f"{matrix_rate:,.0f} checks/s ({matrix_ratios[-1]:.2f}x)"
                )
        finally:
            process.terminate()
            process.wait(timeout=30)
    bake_ratio = statistics.median(bake_ratios)
    print(
        f"median: bake {bake_ratio:.2f}x wrk (target >= {TARGET_RATIO}x), "
        f"matrix alone {statistics.median(matrix_ratios):.2f}x"
    )
    with tempfile.TemporaryDirectory() as temp:
        profile_ok = _profile_cost(args.profile_rows, Path(temp))
    questions_ok = _questions(args, kind)
    return 0 if bake_ratio >= TARGET_RATIO and profile_ok and questions_ok else 1


if __name__ == "__main__":
    sys.exit(main())
