"""Output files written atomically (issue 22): to a temporary file in the same directory, then
renamed over the destination, so a run that is killed or fails while writing (a full disk, a
file size limit) leaves the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, data) -> None:
    """Write `data` (str: UTF-8, or bytes) to `path` atomically; OSError on failure (the
    temporary file removed, `path` untouched)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777       # an existing file keeps its mode
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask                       # as open(path, "w") would create it
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
