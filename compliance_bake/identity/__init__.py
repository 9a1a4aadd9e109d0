"""Agent keys: the key store (prefix lookup, constant-time compare) and its file.

Shared by the board (which measures it) and the service (which runs it); imports only inputs.
"""
