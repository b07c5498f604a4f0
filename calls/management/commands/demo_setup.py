"""Set up the demo: a login, a project it belongs to, and an ingest key."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from calls.keys import create_key
from calls.models import Membership, Project

DEMO_USER = "demo"
DEMO_PASSWORD = "callscope-demo"


class Command(BaseCommand):
    help = "Create the demo login and project, and write a fresh ingest key to --key-file."

    def add_arguments(self, parser):
        parser.add_argument("--key-file", required=True)

    def handle(self, key_file, **options):
        User = get_user_model()
        user, _ = User.objects.get_or_create(username=DEMO_USER)
        user.set_password(DEMO_PASSWORD)
        user.save()
        project, _ = Project.objects.get_or_create(slug="demo", defaults={"name": "Demo clinic"})
        Membership.objects.update_or_create(
            project=project, user=user, defaults={"role": Membership.Role.ADMIN}
        )
        _key, secret = create_key(project, label="make run demo")
        path = Path(key_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secret + "\n")
        path.chmod(0o600)
        self.stdout.write(f"Demo login: {DEMO_USER} / {DEMO_PASSWORD}")
