"""Developer tools over the product: benchmarks and the scripted walkthrough.

Installed by the developer settings only (DJANGO_SETTINGS_MODULE=anchor_site.settings_dev);
the production settings leave this app, its commands and tiktoken out.
"""
