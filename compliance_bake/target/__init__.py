"""Targets: the compliance service under test, in-process or (later) over HTTP."""
