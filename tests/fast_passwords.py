"""Passwords hashed at one PBKDF2 round in the test process, still readable by a real server.

Django's PBKDF2 hasher runs a million rounds, a quarter of a CPU second per password on this
kind of machine, and the admin and OAuth tests make a person with a password in hundreds of
tests. The test process hashes with the same algorithm at one round instead. The round count
is written into each hash, so a server subprocess started on the production settings (the
OAuth and live-server tests) still verifies a password the test set, and a hash such a server
wrote still verifies here. Nothing in the suite checks how strong the hashing is.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import hashers
from django.test import override_settings

PRODUCTION_PBKDF2 = "django.contrib.auth.hashers.PBKDF2PasswordHasher"


class OneRoundPBKDF2PasswordHasher(hashers.PBKDF2PasswordHasher):
    iterations = 1


def use_one_round_hashing() -> None:
    """Put the one-round hasher in the production PBKDF2 hasher's place, first in the list.

    Replaced, not added beside it: two hashers of one algorithm would let the million-round
    one judge every hash as out of date, and rewrite it at each sign-in.
    """
    # For the whole run: Django's setting_changed signal drops its cached hashers.
    override_settings(
        PASSWORD_HASHERS=[
            f"{__name__}.{OneRoundPBKDF2PasswordHasher.__name__}",
            *(name for name in settings.PASSWORD_HASHERS if name != PRODUCTION_PBKDF2),
        ]
    ).enable()
