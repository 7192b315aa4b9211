"""Build the POST a person's browser would send from an admin change page, as it was drawn."""

from __future__ import annotations

from typing import Any


def page_post_data(response: Any) -> dict[str, Any]:
    """Every field of the main form and of its inline formsets, with the values as rendered."""
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms.append(inline.formset.management_form)
        forms.extend(inline.formset.forms)
    data: dict[str, Any] = {}
    for form in forms:
        for name in form.fields:
            value = form[name].value()  # already prepared the way the widget renders it
            if value is False or value is None:
                continue  # an unchecked box or an empty field is simply absent from a POST
            data[form.add_prefix(name)] = "on" if value is True else value
    return data
