"""A test-only app that writes to stdout every way it can, installed only by its own settings."""
