"""Forms for editing a record in the admin: the services' checks run early and are shown beside
their field; the services check again under lock at save time, and that check counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from django import forms

from records import validation as v
from records.admin.common import as_validation_error
from records.admin.record_writes import links_revision, stale_message
from records.errors import AnchorError
from records.models import Record, Relationship

T = TypeVar("T")


class PrettyJSONField(forms.JSONField):
    """Indented, key-sorted, unescaped JSON, so a person can read and edit it in a textarea."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _service_check(
    form: forms.BaseForm, field: str, check: Callable[..., T], *args: Any
) -> T | None:
    try:
        return check(*args)
    except AnchorError as exc:
        form.add_error(field, as_validation_error(exc))
        return None


class RecordForm(forms.ModelForm):  # type: ignore[type-arg]
    # The model's field is called data, like BaseForm's bound data; Django's form metaclass
    # moves declared fields off the class, so the two never meet at runtime.
    data = PrettyJSONField(  # type: ignore[assignment]
        required=False,
        widget=forms.Textarea(attrs={"rows": 14, "cols": 80, "class": "anchor-json-input"}),
        help_text=(
            "A JSON object. Changed and added keys are saved; keys cannot be removed (the store "
            "never deletes fields; set a value to null instead)."
        ),
    )
    change_reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.TextInput(attrs={"size": 80}),
        help_text="Why you are making this change; shown in the record's history.",
    )
    loaded_version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    loaded_links_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Record
        fields = ["collection", "title", "data"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.instance._state.adding and not self.is_bound:
            self.fields["loaded_version"].initial = self.instance.version
            self.fields["loaded_links_revision"].initial = links_revision(self.instance)

    def clean_title(self) -> str | None:
        return _service_check(self, "title", v.title, self.cleaned_data.get("title"))

    def clean_data(self) -> dict[str, Any] | None:
        data = self.cleaned_data.get("data")
        data = {} if data is None else data
        return _service_check(self, "data", v.json_object, "data", data)

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        record: Record = self.instance
        if record._state.adding:  # UUID keys are set before saving
            return cleaned
        if record.archived_at is not None:
            raise forms.ValidationError(
                f"“{record.title}” is archived; its title and data can no longer change.",
                code="archived",
            )
        loaded_version = cleaned.get("loaded_version")
        loaded_links = cleaned.get("loaded_links_revision")
        if loaded_version is None or loaded_links is None:
            raise forms.ValidationError(
                "This form does not say which version of the record it was loaded at; reload "
                "the page and make your change again.",
                code="stale",
            )
        message = stale_message(record, loaded_version, loaded_links)
        if message:
            raise forms.ValidationError(message, code="stale")
        data = cleaned.get("data")
        if isinstance(data, dict):
            removed = sorted(set(record.data) - set(data))
            if removed:
                self.add_error(
                    "data",
                    f"Keys cannot be removed: {', '.join(removed)}. The store keeps every field "
                    "it was given; set a value to null to clear it.",
                )
        return cleaned


class RecordAliasForm(forms.ModelForm):  # type: ignore[type-arg]
    def clean_alias(self) -> str | None:
        return _service_check(self, "alias", v.title, self.cleaned_data.get("alias"), "alias")


class OutgoingLinkForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Relationship
        fields = ["relationship_type", "target"]

    def clean_relationship_type(self) -> str | None:
        return _service_check(
            self,
            "relationship_type",
            v.relationship_type,
            self.cleaned_data.get("relationship_type"),
        )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        target: Record | None = cleaned.get("target")
        source = self.instance.source if self.instance.source_id else None
        if target is None or source is None or not self.has_changed():
            return cleaned
        if target.workspace_id != source.workspace_id:
            self.add_error("target", "That record belongs to another workspace.")
        elif target.pk == source.pk:
            self.add_error("target", "A record cannot be linked to itself.")
        elif target.archived_at is not None:
            self.add_error("target", f"“{target.title}” is archived; new links to it are refused.")
        return cleaned
