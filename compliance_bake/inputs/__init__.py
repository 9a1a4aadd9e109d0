"""Inputs: fixtures, the ZIP index, strict JSON, JSON Schemas, private files and the domain models,
and `redaction`, which removes secrets from text that came from outside.

May import only the kernel modules (errors, clock, progress, resources, gc_pause); nothing above.
"""
