import sys

from django.apps import AppConfig


class NoisyConfig(AppConfig):
    name = "tests.e2e.noisy"
    label = "noisy"

    def ready(self) -> None:
        print("STRAY-READY from an app's ready()")  # noqa: T201 - the stray output under test
        sys.stdout.flush()
