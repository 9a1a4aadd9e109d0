"""`python -m compliance_bake` runs the command line."""

from __future__ import annotations

from compliance_bake.cli.main import main

if __name__ == "__main__":
    main()
