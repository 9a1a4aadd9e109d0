"""The bundled demo fixtures, copied out of the package into a folder the operator names.

README's and `--help`'s examples name `fixtures/plays.csv` and `fixtures/drifted`: in a checkout
they are the repository's folder, after `pip install` they live inside the package, where no one
should have to look. `compliance-bake demo init` puts them where the examples expect them. It
never replaces a file: an existing one may be the operator's own fixtures, so a folder that holds
any of the demo's names is refused whole, before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs.atomic_write import write_whole
from compliance_bake.resources import demo_fixtures_dir


def demo_files() -> list[str]:
    """The demo's files, relative to the fixtures folder, slash-separated, in name order."""
    root = demo_fixtures_dir()
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def copy_demo_files(folder: Path) -> list[str]:
    """Copy every demo file into `folder` (made if missing), each whole, mode 0644; return the
    names written. InputError (exit 2) when `folder` is not a folder or already holds one of the
    names (a link counts: it is not followed), with nothing written."""
    names = demo_files()
    if folder.exists() and not folder.is_dir():
        raise InputError(f"demo init: {folder} is not a folder", "name a new or empty folder")
    taken = [n for n in names if (folder / n).exists() or (folder / n).is_symlink()]
    if taken:
        raise InputError(
            f"demo init: {folder} already holds {', '.join(taken)}; no file is replaced",
            f"name another folder (compliance-bake demo init FOLDER), or move {folder} away",
        )
    root = demo_fixtures_dir()
    for name in names:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_whole(target, (root / name).read_bytes())
    return names
