import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
django_asgi_app = get_asgi_application()  # before anything imports models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from calls.guards import BodyLimit, SameOriginValidator  # noqa: E402
from dashboard.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Oversize /api/ bodies are refused as they arrive, before Django
        # spools them to disk for an unauthenticated client.
        "http": BodyLimit(django_asgi_app),
        # Origin first: it must be this exact host and port (another port on
        # our hostname shares the session cookie) and an allowed host; then
        # the session; each consumer checks membership before joining a group.
        "websocket": SameOriginValidator(
            AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
