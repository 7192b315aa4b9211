import sys

from django.apps import AppConfig


class NoisyConfig(AppConfig):
    name = "tests.e2e.noisy"
    label = "noisy"

    def ready(self) -> None:
        print("STRAY-READY from an app's ready()")  # noqa: T201 - the stray output under test
        sys.stdout.flush()
        from tests.e2e.noisy.mcp import StrayOutputTools
        from workflow.mcp.server import register_toolsets

        register_toolsets((StrayOutputTools,))
