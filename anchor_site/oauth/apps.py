from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "anchor_site.oauth"
    verbose_name = "Team mode's OAuth"
