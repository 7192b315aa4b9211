"""Registers team mode's system checks (anchor.E00x / anchor.W00x) at start-up."""

from django.apps import AppConfig


class AnchorHttpConfig(AppConfig):
    name = "anchor_site.http"
    label = "anchor_http"
    verbose_name = "Anchor team mode"

    def ready(self) -> None:
        from anchor_site.http import checks  # noqa: F401
