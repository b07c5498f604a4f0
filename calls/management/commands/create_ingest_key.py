from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from calls.keys import create_key
from calls.models import Project


class Command(BaseCommand):
    help = "Create an ingest key for a project (created if new). Prints the key on the last line."

    def add_arguments(self, parser):
        parser.add_argument("project_slug")
        parser.add_argument("--label", default="")

    def handle(self, project_slug, label, **options):
        if slugify(project_slug) != project_slug:
            raise CommandError(f"{project_slug!r} is not a slug (lowercase letters, digits, '-').")
        project, created = Project.objects.get_or_create(
            slug=project_slug, defaults={"name": project_slug}
        )
        key, secret = create_key(project, label=label)
        if created:
            self.stderr.write(f"Created project {project.slug}.")
        self.stderr.write(f"Key {key.prefix}… for project {project.slug}; it is shown only now:")
        self.stdout.write(secret)
