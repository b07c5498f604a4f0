from django.urls import path

from calls.live import CallConsumer, ProjectConsumer
from triage.live import QueueConsumer, TeamConsumer

websocket_urlpatterns = [
    path("ws/p/<slug:slug>/", ProjectConsumer.as_asgi()),
    path("ws/calls/<int:call_pk>/", CallConsumer.as_asgi()),
    path("ws/calls/<int:call_pk>/team/", TeamConsumer.as_asgi()),
    path("ws/p/<slug:slug>/queue/", QueueConsumer.as_asgi()),
]
