"""Error ids: what a user is told about a failure, tied to the log line that explains it.

A user reads "error 3f9a1c" and what they can do about it; the log line carrying
the same id has the details a user must never see — exception names, SQL, hosts.
The user can quote the id to an admin, who finds the line with it.
"""

from __future__ import annotations

import secrets


def new_error_id() -> str:
    """A short random id (six hex digits): unique enough within a day of logs."""
    return secrets.token_hex(3)
