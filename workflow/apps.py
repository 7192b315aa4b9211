from django.apps import AppConfig


class WorkflowConfig(AppConfig):
    name = "workflow"
    verbose_name = "Agent workflow"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from workflow.mcp.server import install

        install()
