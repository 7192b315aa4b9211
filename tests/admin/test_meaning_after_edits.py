"""A person's edit in the admin keeps the record's embedding current, as an agent's write does."""

from __future__ import annotations

from records import selectors
from records.models import RecordEmbedding
from tests.admin.forms import page_post_data
from tests.admin.test_record_edits import change_url


def test_an_admin_edit_re_embeds_the_record(admin_client_as_maya, hiring):
    kirat = hiring.kirat
    # This process searches the workspace by meaning, so its writes keep embeddings current.
    selectors.search_records(workspace_id=kirat.workspace_id, text="engineer", mode="meaning")
    before = RecordEmbedding.objects.get(record=kirat)
    form = page_post_data(admin_client_as_maya.get(change_url(kirat), {"edit": "1"}))
    form.update(
        title="Kirat",
        data='{"email": "kirat@example.com", "bio": "Kubernetes and cloud infrastructure"}',
        change_reason="From his CV",
    )
    response = admin_client_as_maya.post(change_url(kirat), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    kirat.refresh_from_db()
    after = RecordEmbedding.objects.get(record=kirat)
    assert after.record_version == kirat.version > before.record_version
    assert bytes(after.vector) != bytes(before.vector)
    page = selectors.search_records(
        workspace_id=kirat.workspace_id, text="container orchestration platform", mode="meaning"
    )
    assert page["records"][0]["title"] == "Kirat"
