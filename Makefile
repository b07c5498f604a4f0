# Callscope: `make run` (demo server with live sample calls) and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := run

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
DEMO := .demo

# Django 6 needs Python >= 3.12. Take the first suitable interpreter: $(PYTHON)
# if given, then python3.13 / python3.12 on PATH, pyenv's, then python3.
define find_python
for c in "$$PYTHON" python3.13 python3.12 \
    $$(ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV) python3; do \
  [ -n "$$c" ] || continue; \
  if command -v "$$c" >/dev/null 2>&1 && "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
    command -v "$$c"; exit 0; fi; \
done; exit 1
endef

$(STAMP): pyproject.toml
	@py=$$($(find_python)) || { \
	  echo "error: Callscope needs Python 3.12 or newer (Django 6), and none was found." >&2; \
	  echo "       Install one (python3.12+ on PATH or under pyenv) or run: make PYTHON=/path/to/python3.12" >&2; \
	  exit 1; }; \
	echo "Using $$py ($$($$py --version))"; \
	rm -rf $(VENV) && "$$py" -m venv $(VENV)
	@$(PY) -c 'import sys; assert sys.version_info >= (3, 12), sys.version'
	@$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))' > $(VENV)/requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(VENV)/requirements.txt
	@touch $(STAMP)

.PHONY: venv run test test-browser bench clean
venv: $(STAMP)

$(DEMO)/secret_key:
	@mkdir -p $(DEMO) && $(PY) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@ && chmod 600 $@

run: $(STAMP) $(DEMO)/secret_key
	@$(PY) -c 'import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); \
	  s.bind(("$(HOST)", $(PORT)))' 2>/dev/null || { \
	  echo "error: $(HOST):$(PORT) is in use (another Callscope?). Stop it or run: make run PORT=8001" >&2; exit 1; }
	@export SECRET_KEY_FILE=$(DEMO)/secret_key; \
	$(PY) manage.py collectstatic --noinput -v 0 && \
	$(PY) manage.py migrate --noinput -v 0 && \
	$(PY) manage.py demo_setup --key-file $(DEMO)/ingest_key && \
	echo "Open http://$(HOST):$(PORT)/ and log in with the demo login above." && \
	echo "Ingest key for your own agent: $$(cat $(DEMO)/ingest_key)" && \
	{ $(PY) manage.py replay_samples --url http://$(HOST):$(PORT) --key-file $(DEMO)/ingest_key & \
	  replay=$$!; trap 'kill $$replay 2>/dev/null' EXIT; \
	  $(VENV)/bin/daphne -b $(HOST) -p $(PORT) dashboard.asgi:application; }

# The suite on SQLite and the in-memory channel layer, or on PostgreSQL and
# Redis when DATABASE_URL and REDIS_URL are set. Browser tests: make test-browser.
test: $(STAMP)
	SECRET_KEY=test-only-secret $(VENV)/bin/pytest -q -m "not browser" $(PYTEST_ARGS)

test-browser: $(STAMP)
	SECRET_KEY=test-only-secret $(VENV)/bin/pytest -q -m browser $(PYTEST_ARGS)

bench: $(STAMP)
	SECRET_KEY=bench-only-secret $(PY) bench/ingest.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(DEMO) db.sqlite3* test_db*.sqlite3* staticfiles
