from django.apps import AppConfig


class RecordsConfig(AppConfig):
    name = "records"
    verbose_name = "Anchor store"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from records.connection_health import note_new_connection
        from records.query_bounds import prepare_new_connection

        connection_created.connect(prepare_new_connection, dispatch_uid="anchor.query_bounds")
        connection_created.connect(note_new_connection, dispatch_uid="anchor.connection_health")
