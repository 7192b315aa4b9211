from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save


class OAuthConfig(AppConfig):
    name = "anchor_site.oauth"
    verbose_name = "Team mode's OAuth"

    def ready(self) -> None:
        from anchor_site.oauth.resource import revoke_when_deactivated

        post_save.connect(
            revoke_when_deactivated,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="anchor.oauth.revoke_when_deactivated",
        )
