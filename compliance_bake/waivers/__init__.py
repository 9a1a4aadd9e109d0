"""Waivers: known, accepted exceptions (`bake snapshot --waivers FILE`), read, matched against
the bake's failing items, recorded in the snapshot and re-derived by `verify` (docs/waivers.md).
"""
