"""Who may ask: the access decision every front end applies (Telegram's middleware,
the HTTP API's gate), from ADMIN_IDS, the stored role and status, and ACCESS_MODE.

- ADMIN_IDS (config) and role ``admin`` (database) make an admin; config wins: an id in
  ADMIN_IDS that is banned in the database stays admin (logged).
- Banned users are refused.
- ACCESS_MODE=allowlist: users not on the allowlist are refused, with their id to pass
  to an admin.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from reasoning_core import N_, Account, AccountStore, StoreError, User

log = logging.getLogger(__name__)

#: The refusals, English msgids: sent in the update's language (`LanguageMiddleware`).
BANNED_TEXT = N_("⛔ You are banned from using this bot.")
STORE_DOWN_TEXT = N_("Sorry — I can't check access right now (my database is unreachable).")
ALLOWLIST_TEXT = N_(
    "🔒 Sorry, this bot is available to invited users only. If you should have access, "
    "ask an admin to allow your id: <code>{user_id}</code>"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """An admin or not, and the refusal to send instead of handling (None: go ahead): an
    English msgid, ``{user_id}`` filled in when it is sent."""

    is_admin: bool
    refusal: str | None = None


class AccessPolicy:
    """The verdict for one user: an admin or not, refused or not."""

    def __init__(
        self, *, accounts: AccountStore, admin_ids: frozenset[int], access_mode: str
    ) -> None:
        self._accounts = accounts
        self._admin_ids = admin_ids
        self._allowlist = access_mode == "allowlist"

    async def verdict(self, user_id: int, *, known: User | None = None) -> Verdict:
        """Decide from ADMIN_IDS, the stored role and status, and the access mode.

        `known` is the user `UserMiddleware` has just loaded: enough for role and status,
        so only the allowlist (or a failed load) costs another query.
        """
        configured = user_id in self._admin_ids
        account: User | None = known
        if account is None or (self._allowlist and not configured):
            try:
                account = await self._accounts.get(user_id)
            except StoreError as e:
                log.error("access check failed for user %s: %s", user_id, e)
                if configured or not self._allowlist:
                    return Verdict(is_admin=configured)
                return Verdict(is_admin=False, refusal=STORE_DOWN_TEXT)
        is_admin = configured or (account is not None and account.role == "admin")
        if account is not None and account.status == "banned":
            if not configured:
                return Verdict(is_admin=False, refusal=BANNED_TEXT)
            log.warning(
                "user %s is banned in the database but listed in ADMIN_IDS: config wins", user_id
            )
        allowed = isinstance(account, Account) and account.allowed
        if self._allowlist and not is_admin and not allowed:
            return Verdict(is_admin=False, refusal=ALLOWLIST_TEXT)
        return Verdict(is_admin=is_admin)
