"""The write path: operations, record preparation, file sizing, per-file-group merge, commit."""
