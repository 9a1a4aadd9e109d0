"""The transparency log of published snapshots: C2SP tlog-tiles files, RFC 6962 hashing,
checkpoints as signed notes, witnesses' cosignatures."""
