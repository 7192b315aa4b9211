"""People and groups in the admin: superusers only, since whoever may change a user may make them
a superuser. Django's own admins, behind the same scope declaration as every other."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

from records.admin.scoping import WorkspaceScopedAdmin

User = get_user_model()

admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class PersonAdmin(WorkspaceScopedAdmin, UserAdmin):  # type: ignore[type-arg]
    superusers_only = True


@admin.register(Group)
class PersonGroupAdmin(WorkspaceScopedAdmin, GroupAdmin):
    superusers_only = True
