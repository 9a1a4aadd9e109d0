"""The portal screenshots in docs/portal.md, made again from the code as it is: `make
portal-screenshots`.

Two signed bakes of the bundled fixtures on the demo's clock, each in a temporary folder with a
throwaway secret and key: the passing one (`make demo`'s: the ZIP-window audit of the demo plays,
into out/) and the failing one (`make demo-fail`'s: the service answering from fixtures/drifted/,
into out-fail/). Debian's chromium (`/usr/bin/chromium`, driven by Playwright, which downloads
no browser) opens each page at 1280 and 390 px and saves the top of it (the verdict, the signer,
what failed and the first tables) as docs/portal-{pass,fail}-{1280,390}.png.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = "/usr/bin/chromium"
NOW = "2026-11-22T04:06:00Z"
# The part of the page each shot shows: the whole first screen and the tables below it.
HEIGHTS = {1280: 1400, 390: 1700}
BAKES = {
    "pass": ["--deep-audit", str(ROOT / "fixtures" / "plays.csv"), "--out", "out"],
    "fail": ["--service-fixtures", str(ROOT / "fixtures" / "drifted"), "--out", "out-fail"],
}


def bake(folder: Path, env: dict[str, str]) -> dict[str, Path]:
    """Each bake's page; the failing bake's exit 1 is its expected outcome."""
    cli = [sys.executable, "-m", "compliance_bake"]
    subprocess.run(
        [*cli, "signing-key", "mint"], cwd=folder, env=env, check=True, capture_output=True
    )
    pages = {}
    for name, args in BAKES.items():
        done = subprocess.run(
            [*cli, "bake", "snapshot", "--now", NOW, "--quiet", *args],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != (0 if name == "pass" else 1):
            sys.exit(f"the {name} bake exited {done.returncode}:\n{done.stderr}")
        pages[name] = folder / args[-1] / "portal" / "compliance" / "index.html"
    return pages


def main() -> int:
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "REPORT_SIGNING_SECRET": secrets.token_hex(32)}
    env.pop("REPORT_SIGNING_SECRET_FILE", None)
    env.pop("SOURCE_DATE_EPOCH", None)
    with tempfile.TemporaryDirectory() as temp, sync_playwright() as driver:
        pages = bake(Path(temp), env)
        browser = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            for name, page_file in pages.items():
                for width, height in HEIGHTS.items():
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    page.goto(page_file.as_uri())
                    shot = DOCS / f"portal-{name}-{width}.png"
                    page.screenshot(path=str(shot))
                    context.close()
                    print(f"wrote {shot.relative_to(ROOT)}")
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
