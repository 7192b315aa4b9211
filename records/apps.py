from django.apps import AppConfig


class RecordsConfig(AppConfig):
    name = "records"
    verbose_name = "Anchor store"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_migrate, post_save

        from records.query_bounds import prepare_new_connection
        from records.roles import sync_role_groups
        from records.services import access_tokens_revoke_when_deactivated
        from records.storage_faults import note_new_connection

        connection_created.connect(prepare_new_connection, dispatch_uid="anchor.query_bounds")
        connection_created.connect(note_new_connection, dispatch_uid="anchor.connection_health")
        post_save.connect(
            access_tokens_revoke_when_deactivated,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="anchor.tokens.revoke_when_deactivated",
        )
        post_migrate.connect(sync_role_groups, dispatch_uid="anchor.roles")
