"""Inputs: fixtures, the ZIP index, strict JSON, JSON Schemas, private files and the domain models.

May import only the kernel modules (errors, clock, progress, resources, memory); nothing above.
"""
