"""Signing: canonical bytes, SHA3-256 digests, HMAC proofs, the signing secret, integrity checks.

Pure functions over JSON values; imports only inputs and the kernel, never report or targets.
"""
