"""No input path of the package opens a file other than through the one opener (inputs/files:
`read_bounded`, `read_regular_file`), which refuses non-regular files and oversize everywhere and
links inside the folders the tool publishes or serves.

The package's source is tokenized (strings and comments are not code) and every call of `open(`,
`.open(`, `os.open(`, `os.fdopen(`, `.read_text(` and `.read_bytes(` is listed; each must be one of
the allowed calls below, which say why it is not an input read through the opener: the opener
itself, writers, locks on folders, the package's own data, the plays files streamed by the deep
audit (each plays path an engine reads, whatever the engine and the form, a path or `file:`, is
first opened through the opener's `open_regular`, which refuses anything but a regular file without
blocking: audit/plays_source's head read and audit/plays_input's regular_file; standard input, `-`,
is a pipe or a regular file redirected in (a terminal or a named FIFO is refused), and only its
spooled copy is read after). An allowed call that no longer exists fails too, so the list stays the
list of what is there. The log's checkpoint, out/log/'s files, the attestation, the licences
re-read and the served files are inputs too, read through the opener.
"""

from __future__ import annotations

import io
import tokenize
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "compliance_bake"
CALLS = {"open", "fdopen", "read_text", "read_bytes"}

OPENER = "the one opener itself"
WRITER = "writes a file (the atomic writer, the publish, a report), reads nothing"
LOCK = "opens a folder to flock or fsync it, reads no file"
PACKAGE_DATA = "the package's own data, shipped with it, not an input"
PLAYS = "streams a plays file (GBs), or standard input's spooled copy, checked regular first"
NOT_A_FILE = "a method named open, not a file"
DIRECTORY = 'os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))'

# (file relative to the package, the call's line as written, why it is allowed)
ALLOWED: list[tuple[str, str, str]] = [
    ("inputs/files.py", "here = os.open(folder, _FOLDER)", OPENER),
    ("inputs/files.py", "inner = os.open(part, _FOLDER | os.O_NOFOLLOW, dir_fd=here)", OPENER),
    ("inputs/files.py", "return os.open(name, _FLAGS | os.O_NOFOLLOW, dir_fd=here)", OPENER),
    ("inputs/files.py", "return os.open(path, _FLAGS)", OPENER),
    ("inputs/atomic_write.py", 'with os.fdopen(fd, "wb") as handle:', WRITER),
    ("inputs/atomic_write.py", "fd = os.open(tmp, _NEW, 0o600, dir_fd=here)", WRITER),
    ("report/publish.py", 'with open(path, "xb") as handle:', WRITER),
    ("report/publish.py", 'with os.fdopen(fd, "wb") as handle:', WRITER),
    ("report/publish.py", "fd = os.open(out_dir, " + DIRECTORY, LOCK),
    ("report/publish.py", "lock = os.open(stage, " + DIRECTORY, LOCK),
    ("report/publish.py", "fd = os.open(folder, " + DIRECTORY, LOCK),
    ("log/append.py", "fd = os.open(directory, " + DIRECTORY, LOCK),
    ("cli/reporters.py", 'fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))', WRITER),
    ("cli/reporters.py", 'with os.fdopen(fd, "wb") as handle:', WRITER),
    ("audit/engines/spark.py", 'with path.open("w", encoding="utf-8") as handle:', WRITER),
    ("audit/plays_input.py", 'with target.open("wb") as out:', WRITER),
    ("inputs/files.py", 'handle = os.fdopen(fd, "rb")', OPENER),
    ("audit/plays_input.py", 'with self.path.open("rb") as handle:', PLAYS),
    ("audit/plays_input.py", 'with path.open("rb") as handle:', PLAYS),
    ("audit/plays_input.py", 'with source.open("rb") as src, target.open("wb") as raw:', PLAYS),
    ("audit/play_lines.py", 'open(path, "rb") as handle,', PLAYS),
    ("audit/record_count.py", 'with path.open("rb") as handle:', PLAYS),
    ("audit/accounting.py", 'with path.open("rb") as handle:', PLAYS),
    ("audit/engines/duckdb_progress.py", "for line in _IO.read_text().splitlines():",
     "/proc/self/io: this process's own read counter, not an input"),
    ("inputs/zipindex.py",
     'zips, states, cities, acceptable = path.read_text(encoding="utf-8").split("\\n")[:4]',
     PACKAGE_DATA),
    ("inputs/schemas.py", "document: dict[str, Any] = loads_strict(path.read_bytes())",
     PACKAGE_DATA),
    ("targets/profile_file.py",
     'return (resources.files("compliance_bake.targets") / "profiles" / "builtin.toml").read_text(',
     PACKAGE_DATA),
    ("cli/docs_cmd.py", 'with page.open(encoding="utf-8") as text:', PACKAGE_DATA),
    ("inputs/demo_files.py", "write_whole(target, (root / name).read_bytes())", PACKAGE_DATA),
    ("cli/docs_cmd.py", 'text = visible_lines(found[name].read_text(encoding="utf-8"))',
     PACKAGE_DATA),
    ("cli/docs_cmd.py", "os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())",
     "/dev/null for a closed stdout pipe: writes, reads nothing"),
    ("audit/engines/__init__.py", "return SparkEngine.open(options)", NOT_A_FILE),
    ("audit/engines/spark.py", "def open(cls, options: EngineOptions) -> SparkEngine:",
     NOT_A_FILE),
    ("targets/transport.py", "async def open(self) -> None:", NOT_A_FILE),
]  # fmt: skip


def calls_in_package(package: Path = PACKAGE) -> Counter[tuple[str, str]]:
    """(file, the stripped line) of every call of an opening name, strings and comments
    excluded."""
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(package.rglob("*.py")):
        source = path.read_text("utf-8")
        lines = source.splitlines()
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
        ]
        for token, after in zip(tokens, tokens[1:], strict=False):
            if token.type == tokenize.NAME and token.string in CALLS and after.string == "(":
                line = lines[token.start[0] - 1].strip()
                found[(path.relative_to(package).as_posix(), line)] += 1
    return found


def test_every_opening_call_is_the_opener_or_allowed_with_a_reason() -> None:
    found = calls_in_package()
    allowed = Counter((file, line) for file, line, _ in ALLOWED)
    unexplained = sorted(key for key in found if key not in allowed)
    assert unexplained == [], "open these through inputs/files.read_regular_file, or allow them"
    stale = sorted(key for key in allowed if key not in found)
    assert stale == [], "allowed calls that no longer exist: remove them from ALLOWED"
    assert all(reason for _, _, reason in ALLOWED)


def test_the_scan_finds_a_call_planted_in_the_package(tmp_path: Path) -> None:
    """The scan itself can fail: a read planted in a copy of the package is found."""
    copy = tmp_path / "compliance_bake"
    copy.mkdir()
    (copy / "planted.py").write_text(
        'from pathlib import Path\n# open( in a comment\nX = "read_bytes("\n'
        "def f(p: Path) -> bytes:\n    return p.read_bytes()\n"
    )
    assert calls_in_package(copy) == Counter({("planted.py", "return p.read_bytes()"): 1})
