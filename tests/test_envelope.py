"""The shared envelope checks fail loudly on the replies they exist to catch."""

from __future__ import annotations

import pytest

from tests.envelope import expect_ok, expect_refused

OK = {"ok": True, "result": {"records": []}}
NOT_FOUND = {"ok": False, "error": {"code": "NOT_FOUND", "message": "no such record"}}


def test_expect_ok_returns_the_result_and_names_a_refusal():
    assert expect_ok(OK, "search_records") == {"records": []}
    with pytest.raises(AssertionError, match=r"get_record_context\({'record_id': 'x'}\) was ref"):
        expect_ok(NOT_FOUND, "get_record_context", {"record_id": "x"})


def test_expect_refused_returns_the_error_and_checks_the_code():
    assert expect_refused(NOT_FOUND, "get_record_context", "NOT_FOUND") is NOT_FOUND["error"]
    with pytest.raises(AssertionError, match="refused with NOT_FOUND, not INVALID_INPUT"):
        expect_refused(NOT_FOUND, "get_record_context", "INVALID_INPUT")
    with pytest.raises(AssertionError, match="should have been refused with NOT_FOUND"):
        expect_refused(OK, "search_records", "NOT_FOUND")


@pytest.mark.parametrize("reply", [None, {}, {"ok": "yes", "result": 1}, "ok"])
def test_anything_but_an_envelope_fails_both_checks(reply):
    with pytest.raises(AssertionError, match="did not answer with a tool envelope"):
        expect_ok(reply, "search_records")
    with pytest.raises(AssertionError, match="did not answer with a tool envelope"):
        expect_refused(reply, "search_records", "NOT_FOUND")
