"""Benchmarks of compliance-bake: a fixture generator, the bake benchmark and the startup benchmark.

Run them as scripts (`python bench/bake_bench.py`, `python bench/startup_bench.py`, see the
Makefile); tests may import `bench.gen_fixtures` to build large fixtures.
"""
