"""The per-process cache skeleton both the name list and the meaning vectors use."""

from __future__ import annotations

from records.scope_cache import ScopeCache


def test_a_value_serves_only_at_its_own_revision():
    cache: ScopeCache[int, str] = ScopeCache(4)
    assert cache.get("a", 1) is None and cache.latest("a") is None
    cache.put("a", 1, "one")
    assert cache.get("a", 1) == "one"
    assert cache.get("a", 2) is None, "behind the counter: a miss"
    assert cache.get("a", 0) is None, "ahead of the counter (a restored store): a miss too"
    assert cache.latest("a") == (1, "one"), "kept, to be brought up to date"
    cache.put("a", 2, "two")
    assert cache.get("a", 2) == "two" and cache.get("a", 1) is None


def test_revisions_may_be_any_comparable_key():
    cache: ScopeCache[tuple[tuple[int, int], ...], str] = ScopeCache(4)
    cache.put("ws", ((7, 1), (8, 1)), "vectors")
    assert cache.get("ws", ((7, 1), (8, 1))) == "vectors"
    assert cache.get("ws", ((9, 1), (8, 1))) is None, "the same value on a new counter row"


def test_the_least_recently_used_scope_goes_first():
    cache: ScopeCache[int, str] = ScopeCache(2)
    cache.put("a", 1, "a")
    cache.put("b", 1, "b")
    assert cache.get("a", 1) == "a"  # a is now the most recent
    cache.put("c", 1, "c")
    assert cache.latest("b") is None
    assert cache.get("a", 1) == "a" and cache.get("c", 1) == "c"


def test_drop_and_clear_forget():
    cache: ScopeCache[int, str] = ScopeCache(4)
    cache.put("a", 1, "a")
    cache.put("b", 1, "b")
    cache.drop("a")
    cache.drop("missing")
    assert cache.latest("a") is None and cache.get("b", 1) == "b"
    cache.clear()
    assert cache.latest("b") is None
