"""The first run outside a checkout: the wheel in a fresh virtual environment, an empty folder,
and every console example of README and of `compliance-bake --help`, run as printed and in order,
each with the exit code the text gives it.

README's examples are the `$ ` lines of its `console` blocks (a line ending in `\\` goes on);
`--help`'s are the lines of its Examples section, as the installed command prints them. Each
runs through bash in the folder, with the environment a newcomer has: no signing secret, no key
and no `PYTHONPATH`, the fresh environment's `bin` first on `PATH`. An `export` carries on to the
later lines. A line ending in `&` starts a server that the later lines use: it runs until the
end, and the next line waits for its `listening on` line. The serve example's port 8080 is the
one fixed port: when something else holds it, the block runs on a free port instead.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.wheel import build_wheel, fresh_venv

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# The examples README says exit 1 ("Exit 1, and the files are written"; "Exit 1 because a
# decision changed"); every other example passes.
EXIT_ONE = ("compliance-bake bake snapshot --service-fixtures", "compliance-bake diff ")


def _joined(lines: list[str]) -> list[str]:
    """Lines with their `\\` continuations joined, as the shell joins them."""
    commands: list[str] = []
    going_on = False
    for line in lines:
        if going_on:
            commands[-1] = commands[-1][:-1].rstrip() + " " + line.strip()
        else:
            commands.append(line.strip())
        going_on = commands[-1].endswith("\\")
    return commands


def readme_commands() -> list[str]:
    commands: list[str] = []
    for block in re.findall(r"^```console\n(.*?)^```", README.read_text("utf-8"), re.M | re.S):
        lines: list[str] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                lines.append(line[2:])
            elif lines and lines[-1].endswith("\\"):
                lines.append(line)
        commands += _joined(lines)
    return commands


def help_commands(text: str) -> list[str]:
    examples = text.split("Examples:\n", 1)[1].split("\n\n", 1)[0]
    return _joined([line for line in examples.splitlines() if line.strip()])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh environment, outside the repository, holding the wheel."""
    root = tmp_path_factory.mktemp("newcomer")
    assert ROOT not in root.parents
    return fresh_venv(build_wheel(root / "wheel"), root / "venv")


def _newcomer_env(bin_dir: Path, home: Path) -> dict[str, str]:
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("REPORT_", "COMPLIANCE_", "PYTHON", "VIRTUAL_ENV"))
        and k not in ("SOURCE_DATE_EPOCH", "COLUMNS")
    }
    return kept | {"PATH": f"{bin_dir}:{kept['PATH']}", "HOME": str(home), "COLUMNS": "80"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Session:
    """Commands run one after another in one folder, as a newcomer types them."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.folder, self.env = folder, env
        self.servers: list[subprocess.Popen[str]] = []
        self.log: list[str] = []

    def run(self, command: str) -> int:
        if command.endswith("&"):
            return self._start(command[:-1].strip())
        env_file = self.folder.parent / "env.out"
        script = f"{command}\ncode=$?\nenv -0 > {env_file}\nexit $code\n"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.log.append(f"$ {command}\n{done.stdout}{done.stderr}(exit {done.returncode})")
        if env_file.exists():
            pairs = env_file.read_text("utf-8").split("\0")
            self.env = dict(p.split("=", 1) for p in pairs if "=" in p)
            env_file.unlink()
        return done.returncode

    def _start(self, command: str) -> int:
        server = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-c", f"exec {command}"],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.servers.append(server)
        assert server.stderr is not None
        line = server.stderr.readline()  # the first line is the address, or why it failed
        self.log.append(f"$ {command} &\n{line}")
        return 0 if "listening on" in line else server.wait(timeout=30)

    def stop(self) -> None:
        for server in self.servers:
            server.terminate()
            server.wait(timeout=30)
            if server.stderr is not None:
                server.stderr.close()


@pytest.fixture
def session(installed: Path, tmp_path: Path) -> Iterator[Session]:
    folder = tmp_path / "empty"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    started = Session(folder, _newcomer_env(installed, tmp_path / "home"))
    yield started
    started.stop()


def test_the_fresh_environment_runs_the_wheel_not_a_checkout(session: Session) -> None:
    code = session.run("python -c 'import compliance_bake; print(compliance_bake.__file__)' > w")
    where = (session.folder / "w").read_text().strip()
    assert code == 0 and "/venv/lib/" in where and str(ROOT) not in where, where


def test_every_readme_console_example_runs_as_printed_in_an_empty_folder(
    session: Session,
) -> None:
    commands = readme_commands()
    assert len(commands) >= 12 and commands[0] == "compliance-bake demo init", commands
    assert [c for c in commands if c.startswith(EXIT_ONE)], "README lost its failing examples"
    port = "8080" if _port_free(8080) else str(_free_port())
    for command in commands:
        expected = 1 if command.startswith(EXIT_ONE) else 0
        code = session.run(command.replace("8080", port))
        assert code == expected, "\n".join(session.log)


def test_every_help_example_runs_as_printed_in_an_empty_folder(session: Session) -> None:
    assert session.run("compliance-bake --help > help.txt") == 0
    commands = help_commands((session.folder / "help.txt").read_text("utf-8"))
    assert len(commands) >= 8 and "compliance-bake demo init" in commands, commands
    (session.folder / "help.txt").unlink()
    for command in commands:
        assert session.run(command) == 0, "\n".join(session.log)


def test_demo_init_never_replaces_a_file(session: Session) -> None:
    (session.folder / "fixtures").mkdir()
    (session.folder / "fixtures" / "plays.csv").write_text("mine\n")
    assert session.run("compliance-bake demo init 2> err") == 2
    (line,) = (session.folder / "err").read_text().splitlines()
    assert "fixtures already holds plays.csv; no file is replaced" in line
    assert (session.folder / "fixtures" / "plays.csv").read_text() == "mine\n"
    assert sorted(p.name for p in (session.folder / "fixtures").iterdir()) == ["plays.csv"]
    assert session.run("compliance-bake demo init other > out.txt") == 0
    assert (session.folder / "other" / "drifted" / "licences.json").is_file()
    assert "Wrote 4 demo files to other" in (session.folder / "out.txt").read_text()
