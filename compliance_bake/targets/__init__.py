"""Targets: the compliance service under test, the in-process engine or a live service over HTTP.

One `Target` protocol (interface); imports inputs and identity only, never report or above.
"""
