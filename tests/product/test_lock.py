"""The development and CI lock (`requirements-dev.lock`, written by `make lock`) agrees with
pyproject.toml: every dependency pyproject names (runtime, test, Spark and bench extras) is pinned
at a version its range admits, and the lock pins nothing as a direct dependency that pyproject no
longer names. A change to pyproject's dependencies fails here until `make lock` is run."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements-dev.lock"
EXTRAS = ("test", "spark", "bench")
# What uv writes under a pin that pyproject itself asks for.
DIRECT = "compliance-bake (pyproject.toml)"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
# The machine the lock must install on: CPython 3.11 on linux x86_64.
HERE = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux"}


def locked_pins(text: str) -> tuple[dict[str, list[tuple[Version, str]]], set[str]]:
    """Each locked name with its (version, marker) pins, and the names pyproject asked for."""
    pins: dict[str, list[tuple[Version, str]]] = {}
    direct: set[str] = set()
    current = ""
    for line in text.splitlines():
        match = PIN.match(line)
        if match:
            current = canonicalize_name(match.group(1))
            marker = line.split(";", 1)[1].rstrip(" \\") if ";" in line else ""
            pins.setdefault(current, []).append((Version(match.group(2)), marker.strip()))
        elif current and line.strip().lstrip("#").strip().removeprefix("via ") == DIRECT:
            direct.add(current)
    return pins, direct


def pyproject_requirements(text: str) -> list[Requirement]:
    project = tomllib.loads(text)["project"]
    named = list(project["dependencies"])
    for extra in EXTRAS:
        named += project["optional-dependencies"][extra]
    return [Requirement(spec) for spec in named]


def disagreements(pyproject: str, lock: str) -> list[str]:
    """Each way pyproject and the lock disagree, one line each; empty when they agree."""
    from packaging.markers import Marker

    pins, direct = locked_pins(lock)
    wanted = pyproject_requirements(pyproject)
    found = []
    for requirement in wanted:
        if requirement.marker is not None and not requirement.marker.evaluate(HERE):
            continue
        name = canonicalize_name(requirement.name)
        here = [v for v, m in pins.get(name, []) if not m or Marker(m).evaluate(HERE)]
        if not here:
            found.append(f"{requirement}: not pinned in the lock for Python 3.11 on linux")
        elif not all(requirement.specifier.contains(v, prereleases=True) for v in here):
            found.append(f"{requirement}: the lock pins {', '.join(map(str, here))}")
    named = {canonicalize_name(r.name) for r in wanted}
    found += [f"{name}: locked as pyproject's, which no longer names it" for name in direct - named]
    found += [f"{name}: in pyproject, not marked as its own in the lock" for name in named - direct]
    return found


def test_the_lock_agrees_with_pyproject() -> None:
    found = disagreements((ROOT / "pyproject.toml").read_text("utf-8"), LOCK.read_text("utf-8"))
    assert not found, "run `make lock`: " + "; ".join(found)


def test_a_range_the_lock_misses_a_new_dependency_and_a_removed_one_are_each_found() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    lock = LOCK.read_text("utf-8")
    assert '"duckdb>=1.0",' in pyproject and '"click>=8.1",' in pyproject
    raised = pyproject.replace('"duckdb>=1.0",', '"duckdb>=99",')
    assert any(line.startswith("duckdb>=99") for line in disagreements(raised, lock))
    added = pyproject.replace('"click>=8.1",', '"click>=8.1",\n  "psycopg>=3.2",')
    assert any(line.startswith("psycopg>=3.2: not pinned") for line in disagreements(added, lock))
    removed = pyproject.replace('"click>=8.1",', "")
    assert disagreements(removed, lock) == [
        "click: locked as pyproject's, which no longer names it"
    ]


def test_the_makefile_installs_the_test_environment_from_the_lock_alone() -> None:
    """`make test`, `make bench*` and `.ci/run` (which is `make test`) depend on the stamp whose
    rule installs the lock with hashes and the package without dependencies: nothing resolved."""
    makefile = (ROOT / "Makefile").read_text("utf-8")
    rule = makefile.split("$(STAMP): pyproject.toml $(LOCK)", 1)[1].split("\n\n", 1)[0]
    installs = [line.strip() for line in rule.splitlines() if "pip install" in line]
    assert installs == [
        "$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes "
        "--no-deps -r $(LOCK)",
        "$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "
        "--no-build-isolation -e .",
    ]
    assert "LOCK    := requirements-dev.lock" in makefile
    targets = re.findall(r"^(test|bench[a-z-]*): (.*)$", makefile, re.MULTILINE)
    assert {name for name, _ in targets} >= {"test", "bench", "bench-audit", "bench-audit-spark"}
    assert all("$(STAMP)" in needs for _, needs in targets)
    assert "pip install" not in makefile.split("bench-audit-spark: $(STAMP)", 1)[1].split("\n\n")[0]
    assert (ROOT / ".ci" / "run").read_text("utf-8").strip().endswith("make test")
