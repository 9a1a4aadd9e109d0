"""Signing: canonical bytes, SHA3-256 digests, HMAC proofs, the signing secret, integrity checks,
and the public attestation (Ed25519 keys, the DSSE envelope of an in-toto Statement).

Pure functions over JSON values and bytes; imports only inputs and the kernel, never report or
targets (the bake hands the rendered files to the attestation).
"""
