"""The one error type every `edit-fidelity` subcommand may let escape: a problem with the user's input
or data (a missing file, a damaged archive, a port in use), reported by the dispatcher (`server.cli`)
as one line and exit status 2. Other packages subclass it (`benchmark.datadir.DataError`), since
`server` imports nothing from them."""

from __future__ import annotations


class UserError(Exception):
    """What is wrong and what to do, in one line (the message)."""
