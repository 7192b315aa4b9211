from django.apps import AppConfig


class WorkflowConfig(AppConfig):
    name = "workflow"
    verbose_name = "Agent workflow"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # mcp_server (earlier in INSTALLED_APPS) has registered every toolset by now.
        from django.conf import settings
        from mcp_server.djangomcp import global_mcp_server

        from workflow import catalogue, sdk_speedups
        from workflow.instructions import install_server_instructions

        install_server_instructions()
        sdk_speedups.install()
        catalogue.install(global_mcp_server, settings.ANCHOR_TOOLS)
