from django.urls import path

from calls.live import CallConsumer, ProjectConsumer

websocket_urlpatterns = [
    path("ws/p/<slug:slug>/", ProjectConsumer.as_asgi()),
    path("ws/calls/<int:call_pk>/", CallConsumer.as_asgi()),
]
