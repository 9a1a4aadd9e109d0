"""What the group and every command share: click's context settings and the exit-code footer.

Its own module so that the commands and the group (which registers them) both import it, and
neither imports the other.
"""

from __future__ import annotations

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EXIT_CODES = """\b
Exit codes (every command):
  0  done, every check holds
  1  done, and a check failed (board, shadow, integrity, ZIP window, verification)
  2  bad usage or bad input (option, fixture, secret): nothing written
  3  the target failed (unreachable, timed out, malformed): nothing written
  4  internal error (a bug: please report it with the -v output)"""
