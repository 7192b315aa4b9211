"""The admin over the workflow: prepared actions and review tickets, and agendas (read-only).
Importing the modules registers their ModelAdmin classes with the default site."""

from workflow.admin import actions, agendas, panels  # noqa: F401
