"""anchor_token and anchor_member: what an operator types to set up team mode."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from records.models import Workspace
from records.models.membership import AccessToken, WorkspaceMembership
from records.selectors import access_token_find, token_digest


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_member_add_creates_the_user_and_workspace_on_request(db):
    out, _ = run("anchor_member", "add", "alice", "team-a", "--create-user")
    assert "alice is now a member of team-a" in out
    alice = get_user_model().objects.get(username="alice")
    assert not alice.has_usable_password()
    assert Workspace.objects.filter(pk="team-a").exists()
    out, _ = run("anchor_member", "add", "alice", "team-a")
    assert "already a member" in out
    assert WorkspaceMembership.objects.filter(user=alice).count() == 1


def test_member_add_refuses_unknown_users_and_bad_workspace_ids(db):
    with pytest.raises(CommandError, match="there is no user 'ghost'"):
        run("anchor_member", "add", "ghost", "team-a")
    get_user_model().objects.create_user(username="alice")
    with pytest.raises(CommandError, match="not a valid workspace ID"):
        run("anchor_member", "add", "alice", "team a/../b")
    assert not WorkspaceMembership.objects.exists()


def test_member_list_and_remove(db):
    run("anchor_member", "add", "alice", "team-a", "--create-user")
    run("anchor_member", "add", "bob", "team-b", "--create-user")
    out, _ = run("anchor_member", "list", "--workspace", "team-a")
    assert "alice" in out and "bob" not in out
    run("anchor_member", "remove", "alice", "team-a")
    assert not WorkspaceMembership.objects.filter(user__username="alice").exists()
    with pytest.raises(CommandError, match="not a member"):
        run("anchor_member", "remove", "alice", "team-a")


def test_token_create_prints_the_token_once_and_stores_only_its_digest(db):
    get_user_model().objects.create_user(username="alice")
    out, err = run("anchor_token", "create", "alice", "--name", "laptop")
    raw = out.strip()
    assert raw.startswith("anchor_") and "\n" not in raw, "stdout carries the token alone"
    assert "shown only now" in err
    token = AccessToken.objects.get()
    assert token.key_hash == token_digest(raw) and raw not in token.key_hash
    secret = raw.split("_", 2)[2]  # the secret may itself hold underscores
    assert secret not in str(AccessToken.objects.values().get())
    assert access_token_find(raw) == token

    listed, _ = run("anchor_token", "list")
    assert token.prefix in listed and "laptop" in listed and raw not in listed


def test_token_revoke_by_prefix_or_whole_token(db):
    get_user_model().objects.create_user(username="alice")
    first = run("anchor_token", "create", "alice", "--name", "one")[0].strip()
    second = run("anchor_token", "create", "alice", "--name", "two")[0].strip()
    prefix = first.split("_")[1]
    out, _ = run("anchor_token", "revoke", prefix)
    assert f"Revoked token {prefix}" in out
    assert access_token_find(first) is None
    run("anchor_token", "revoke", second)
    assert access_token_find(second) is None
    out, _ = run("anchor_token", "revoke", prefix)
    assert "already revoked" in out
    assert run("anchor_token", "list")[0] == ""
    assert "revoked" in run("anchor_token", "list", "--all")[0]


def test_token_commands_refuse_mistakes(db):
    with pytest.raises(CommandError, match="there is no user 'ghost'"):
        run("anchor_token", "create", "ghost", "--name", "laptop")
    get_user_model().objects.create_user(username="alice")
    with pytest.raises(CommandError, match="name"):
        run("anchor_token", "create", "alice", "--name", "  ")
    with pytest.raises(CommandError, match="No token with prefix"):
        run("anchor_token", "revoke", "nothing")
    assert not AccessToken.objects.exists()
