from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    """Developer tools: the benchmark and the scripted walkthrough. No models, no product code."""

    name = "anchor_site.devtools"
    label = "devtools"
    verbose_name = "Developer tools"
