"""What Anchor takes from django-oauth-toolkit beyond its public API, one test per reliance.

The validator (anchor_site/oauth/validator.py) overrides two of the toolkit's protected
methods; an upgrade that renames one or changes its arguments would silently skip the
override (the fetch slot never given back, replayed codes no longer revoking their tokens).
The metadata fetcher (anchor_site/oauth/client_metadata.py) reads a document's lifetime with
the toolkit's own Cache-Control rule, and the consent view (anchor_site/oauth/views.py) names
the issuer in its error redirects as the toolkit does in its codes'. Each test fails loudly
here instead.
"""

from __future__ import annotations

import inspect

import pytest
from oauth2_provider.cimd import _effective_max_age
from oauth2_provider.oauth2_backends import _add_iss_to_redirect
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


@pytest.mark.parametrize(
    ("cache_control", "seconds"),
    [
        ("", 24 * 60 * 60),  # none: the longest, CIMD_METADATA_MAX_AGE_SECONDS
        ("public, Max-Age=600", 600),
        ("max-age=5", 5 * 60),  # never below CIMD_METADATA_MIN_AGE_SECONDS
        ("max-age=99999999", 24 * 60 * 60),
        ("no-store, max-age=600", 5 * 60),
        ("No-Cache", 5 * 60),
    ],
)
def test_a_metadata_documents_lifetime_is_still_read_from_cache_control(cache_control, seconds):
    assert _effective_max_age(cache_control) == seconds


def test_the_issuer_is_still_added_to_a_redirect_exactly_once():
    redirect = "http://127.0.0.1:33418/callback?error=access_denied&iss=https%3A%2F%2Fevil&state=s"
    assert _add_iss_to_redirect(redirect, "https://anchor.example") == (
        "http://127.0.0.1:33418/callback?error=access_denied&state=s"
        "&iss=https%3A%2F%2Fanchor.example"
    )
