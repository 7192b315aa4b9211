"""Anchor's settings plus the noisy app; selected per subprocess with DJANGO_SETTINGS_MODULE."""

import sys

from anchor_site.settings import *  # noqa: F403

print("STRAY-SETTINGS from settings import")  # noqa: T201 - the stray output under test
sys.stdout.flush()

INSTALLED_APPS = [*INSTALLED_APPS, "tests.e2e.noisy.apps.NoisyConfig"]  # noqa: F405
