"""Verify: re-checks a baked `out/` offline (schemas, byte layout, digests, HMACs, rules), and
its public attestation with Ed25519 public keys alone (attestation.py).

Sits above report and signing (it re-renders through the report's layout); never imports cli.
"""
