"""Verify: re-checks a baked `out/` offline (schemas, byte layout, digests, HMACs, rules).

Sits above report and signing (it re-renders through the report's layout); never imports cli.
"""
