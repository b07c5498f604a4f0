from django.contrib import admin

from .models import Call, IngestKey, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    inlines = [MembershipInline]


@admin.register(IngestKey)
class IngestKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "project", "label", "created_at", "revoked_at"]
    readonly_fields = ["prefix", "digest"]


@admin.register(Call)
class CallAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "agent", "started_at", "turn_count"]
    list_filter = ["project"]
