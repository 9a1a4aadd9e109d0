"""Benchmarks of compliance-bake, one script per figure (`python bench/bake_bench.py`, see the
Makefile). What they share with the tests (the fixture generator, a live `serve`, a child's own
peak) is in `tests/support/`; the tests import nothing from here.
"""
