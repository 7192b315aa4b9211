"""People and groups in the admin: superusers only.

Whoever may change a user may set their password or make them a superuser, and so act as them
or see every workspace; the workspace scoping would mean nothing. Django's own user and group
admins are kept, behind the same scope declaration every other admin makes.
"""

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
class PersonAdmin(WorkspaceScopedAdmin, UserAdmin):
    superusers_only = True


@admin.register(Group)
class PersonGroupAdmin(WorkspaceScopedAdmin, GroupAdmin):
    superusers_only = True
