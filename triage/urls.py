from django.urls import path

from . import views

urlpatterns = [
    path("inbox/", views.inbox, name="inbox"),
    path("inbox/read", views.read_all, name="inbox-read"),
    path("invite/<str:token>/", views.invite, name="invite"),
    path("p/<slug:slug>/queue/", views.queue, name="queue"),
    path("p/<slug:slug>/queue/bulk", views.bulk, name="queue-bulk"),
    path("p/<slug:slug>/queue/views", views.save_view, name="queue-save-view"),
    path("p/<slug:slug>/queue/views/<int:view_id>/delete", views.delete_view, name="queue-delete-view"),
    path("p/<slug:slug>/members/", views.members, name="members"),
    path("p/<slug:slug>/rollups/", views.rollup_page, name="rollups"),
    path("p/<slug:slug>/calls/<str:call_id>/triage", views.triage_call, name="triage-call"),
    path("p/<slug:slug>/calls/<str:call_id>/comments", views.comment, name="comment"),
    path("p/<slug:slug>/comments/<int:comment_id>/edit", views.edit_comment, name="comment-edit"),
    path("p/<slug:slug>/comments/<int:comment_id>/delete", views.delete_comment, name="comment-delete"),
]
