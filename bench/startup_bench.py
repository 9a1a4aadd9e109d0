"""Benchmark: `compliance-bake --help` against `python -c "import click"`.

    python bench/startup_bench.py [--runs 20]

Times `python -m compliance_bake --help` and `python -c "import click"` as fresh processes,
alternating them (after one warm-up run each), and compares the medians: the CLI's start-up must
stay within 1.5x of importing click alone. Then checks, in one more process that runs the CLI's
`main` with `--help` (catching its SystemExit), that none of the heavy modules the bake needs was
imported. Exits 1 if the ratio is over the target or a heavy module was imported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

MAX_RATIO = 1.5
HEAVY = (
    "jsonschema",
    "jsonschema_rs",
    "jinja2",
    "rich",
    "zipcodes",
    "rfc8785",
    "orjson",
    "duckdb",
    "httpx",
)
CLI = (sys.executable, "-m", "compliance_bake", "--help")
CLICK = (sys.executable, "-c", "import click")
PROBE = f"""
import contextlib, io, json, sys
from compliance_bake.cli.main import main
sys.argv = ["compliance-bake", "--help"]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
heavy = {HEAVY!r}
loaded = sorted(
    name for name in heavy if any(m == name or m.startswith(name + ".") for m in sys.modules)
)
print(json.dumps(loaded))
"""


def _time(command: tuple[str, ...]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _heavy_imports() -> list[str]:
    completed = subprocess.run(
        (sys.executable, "-c", PROBE), check=True, capture_output=True, text=True
    )
    loaded: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each command (20)")
    args = parser.parse_args(argv)

    for command in (CLI, CLICK):  # warm-up: file cache, bytecode
        _time(command)
    cli: list[float] = []
    click: list[float] = []
    for _ in range(max(1, args.runs)):
        cli.append(_time(CLI))
        click.append(_time(CLICK))
    cli_s, click_s = statistics.median(cli), statistics.median(click)
    ratio = cli_s / click_s
    heavy = _heavy_imports()

    print(f"{' '.join(CLI[1:])}: median {cli_s * 1000:.0f} ms over {len(cli)} runs")
    print(f"{' '.join(CLICK[1:])}: median {click_s * 1000:.0f} ms over {len(click)} runs")
    print(f"ratio: {ratio:.2f}x (target <= {MAX_RATIO:g}x)")
    print(f"heavy modules imported by --help: {', '.join(heavy) if heavy else 'none'}")
    failures = []
    if ratio > MAX_RATIO:
        failures.append(f"--help takes {ratio:.2f}x `import click` (target <= {MAX_RATIO:g}x)")
    if heavy:
        failures.append(f"--help imports {', '.join(heavy)}")
    for failure in failures:
        print(f"TARGET MISSED: {failure}")
    if not failures:
        print("all targets met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
