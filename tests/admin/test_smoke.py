"""Every registered changelist, change page and add page renders, so no admin option rots."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from records import services
from records.models import AuditEvent
from records.services import WriteContext, clarification_review_create

REGISTERED = sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label)


def admin_url(model, page: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{page}", args=args)


@pytest.fixture
def populated(hiring, ctx):
    """The hiring demo plus one of everything a smoke test would otherwise find empty."""
    agent = WriteContext(
        workspace_id=ctx.workspace_id,
        actor_id="local-agent",
        decision_reason="User asked to record Kirat's new stage",
        clarification="User said 'Kriat' meant Kirat, the junior backend applicant.",
    )
    kirat = services.record_update(
        ctx=agent, record_id=hiring.kirat.pk, changes={"stage": "onsite"}, expected_version=1
    )
    services.record_alias_add(
        ctx=ctx, record_id=kirat.pk, alias="Kirat S.", expected_version=kirat.version
    )
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="candidates")
    services.self_mapping_set(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    clarified = AuditEvent.objects.exclude(agent_reported_clarification="").get()
    clarification_review_create(
        ctx=WriteContext(workspace_id=ctx.workspace_id, actor_id="user:maya"),
        event_id=clarified.pk,
        state="confirmed",
    )
    return hiring


@pytest.mark.parametrize(
    ("model", "model_admin"), REGISTERED, ids=[model._meta.label for model, _ in REGISTERED]
)
def test_changelist_search_change_and_add_pages_render(
    admin_client_as_maya, populated, model, model_admin
):
    label = model._meta.label
    assert admin_client_as_maya.get(admin_url(model, "changelist")).status_code == 200, label
    searched = admin_client_as_maya.get(admin_url(model, "changelist"), {"q": "Kirat"})
    assert searched.status_code == 200, f"{label} search"
    obj = model._default_manager.order_by("pk").first()
    if obj is not None:
        page = admin_client_as_maya.get(admin_url(model, "change", obj.pk))
        assert page.status_code == 200, f"{label} change page"
    add = admin_client_as_maya.get(admin_url(model, "add"))
    expected = 200 if model_admin.has_add_permission(add.wsgi_request) else 403
    assert add.status_code == expected, f"{label} add page"


@pytest.mark.parametrize("model", [model for model, _ in REGISTERED], ids=lambda m: m._meta.label)
def test_every_list_filter_renders(admin_client_as_maya, populated, model):
    """Apply each filter's first choice, so a filter naming a wrong field fails here."""
    url = admin_url(model, "changelist")
    changelist = admin_client_as_maya.get(url).context["cl"]
    for spec in changelist.filter_specs:
        for choice in list(spec.choices(changelist))[1:2]:
            filtered = admin_client_as_maya.get(url + choice["query_string"])
            assert filtered.status_code == 200, f"{model._meta.label} filter {spec.title}"
