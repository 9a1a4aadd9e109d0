"""The wheel of this checkout, built as pip builds it, and a fresh virtual environment holding it.

No download: the wheel is built without isolation and installed without its dependencies; the
fresh environment reaches the dependencies through a `.pth` line naming the site-packages of the
environment running the tests. That line only adds a folder to `sys.path` after the fresh
environment's own site-packages (the `.pth` files inside it are not read), so the installed wheel
is what `import compliance_bake` finds, never a checkout.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(dest: Path) -> Path:
    """The wheel of this checkout, in `dest`."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(dest), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = dest.glob("compliance_bake-*.whl")
    return wheel


def fresh_venv(wheel: Path, where: Path) -> Path:
    """A new virtual environment at `where` with `wheel` installed; returns its bin folder."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    python = where / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
        + ["--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "_test_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", "utf-8"
    )
    return where / "bin"
