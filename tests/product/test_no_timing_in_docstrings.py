"""Docstrings and comments say why; timing figures live in docs/benchmarks.md.

A figure measured on one machine on one day goes stale in the code while the benchmarks page
is rerun and kept current (`make bench*`), so a docstring or comment of the package holds no
time (a number followed by s, ms, µs, us, ns, seconds or minutes) and no speed ratio (a number
followed by x or ×). Sizes (MiB, KB) are not timings: the package's limits are sizes, and
stay where they are set. ALLOWED lists the true non-timing uses: examples of what the program
prints.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from tests.support.package_source import found_in_package

FIGURE = re.compile(
    r"(?<![\w.])~?\d{1,3}(?:,\d{3})*(?:\.\d+)?(?:\s*-\s*\d+(?:\.\d+)?)?\s*"
    r"(?:s|ms|µs|us|ns|seconds?|minutes?|x|×)(?![\w/])",
)
# (module, figure): examples of the program's own output, not measurements.
ALLOWED = {
    ("cli/phases.py", "0.41 s"),  # the shape of a phase line: `bake: matrix 0.41 s`
    ("cli/phases.py", "30 s"),  # the shape of the heartbeat line: `sign still running, 30 s`
}


def explanations(source: str) -> list[str]:
    """The docstrings of `source`, and its comments (a run of comment lines joined, so that a
    figure broken over two lines is one text)."""
    texts: list[str] = []
    last_comment = -2
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            text = token.string.lstrip("#").strip()
            if token.start[0] == last_comment + 1 and texts:
                texts[-1] += " " + text
            else:
                texts.append(text)
            last_comment = token.start[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                texts.append(docstring)
    return texts


def figures(source: str) -> list[str]:
    return [
        " ".join(m.group().split()) for text in explanations(source) for m in FIGURE.finditer(text)
    ]


def test_the_measure_finds_a_figure_in_a_docstring_or_a_comment() -> None:
    source = (
        '"""Fast: 0.43 s alone and 0.8\n s beside the reader."""\n'
        "x = 1  # about ~2 us a\n# check, 1.5x the floor, 50-70 us\n"
        "def f():\n    '''Hour 24, second 60; 2xx answers; 64 MiB; 0x7f; 3 seconds.'''\n"
    )
    assert figures(source) == ["~2 us", "1.5x", "50-70 us", "0.43 s", "0.8 s", "3 seconds"]


def test_no_timing_figure_in_the_package() -> None:
    found = found_in_package(figures, ALLOWED)
    assert not found, f"move these figures to docs/benchmarks.md; say why instead: {found}"
