"""What Anchor takes from django-oauth-toolkit beyond its public API, one test per reliance.

The validator (anchor_site/oauth/validator.py) overrides two of the toolkit's protected
methods; an upgrade that renames one or changes its arguments would silently skip the
override (the fetch slot never given back, replayed codes no longer revoking their tokens).
Each test fails loudly here instead.
"""

from __future__ import annotations

import inspect

from oauth2_provider.oauth2_validators import OAuth2Validator

from anchor_site.oauth.validator import AnchorOAuth2Validator


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_load_application_is_still_the_toolkits_one_way_to_a_client():
    # The permission check takes a metadata fetch slot; _load_application gives it back.
    assert parameters(OAuth2Validator._load_application) == ["self", "client_id", "request"]
    source = inspect.getsource(OAuth2Validator)
    assert source.count("self._load_application(") >= 3, "every client lookup passes through it"
    assert parameters(AnchorOAuth2Validator._load_application) == parameters(
        OAuth2Validator._load_application
    )


def test_create_refresh_token_still_starts_a_token_family():
    # A refresh family started by a code is named after that code, so a replay finds it.
    expected = ["self", "request", "refresh_token_code", "access_token", "previous_refresh_token"]
    assert parameters(OAuth2Validator._create_refresh_token) == expected
    assert parameters(AnchorOAuth2Validator._create_refresh_token) == expected
    assert "token_family" in inspect.getsource(OAuth2Validator._create_refresh_token)
