"""The test process hashes passwords at one round, in a form the production hasher verifies."""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher, check_password, make_password


def test_a_password_hashed_here_takes_one_round_and_is_not_rewritten():
    encoded = make_password("a long pass phrase")
    assert encoded.startswith("pbkdf2_sha256$1$"), encoded
    rewritten: list[str] = []
    assert check_password("a long pass phrase", encoded, setter=rewritten.append)
    assert rewritten == [], "a one-round hash must not count as out of date here"


def test_the_production_hasher_verifies_a_password_hashed_here():
    encoded = make_password("a long pass phrase")
    production = PBKDF2PasswordHasher()
    assert production.verify("a long pass phrase", encoded)
    assert not production.verify("another phrase", encoded)
