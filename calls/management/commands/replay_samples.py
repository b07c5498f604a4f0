"""Replay the bundled Pipecat captures through the real ingest API, at their own pace.

Used by `make run` so that a newcomer watches calls arrive. Every request body
is posted byte for byte as captured; each is followed by a `response` event
built from the capture's reply script, and each call ends with `call.ended`.
"""

import json
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

SAMPLES = Path(__file__).resolve().parents[2] / "demo_data" / "pipecat-1.1.0"
SCENARIOS = ["sync_tool", "async_tool_user_speaks", "interruption_sync_tool", "fix_in_place"]


def load_scenario(name: str) -> list[dict]:
    """[{seq, received_at, raw (bytes), reply}] of one capture."""
    requests = [json.loads(line) for line in (SAMPLES / f"{name}.jsonl").read_text().splitlines()]
    replies = {
        r["seq"]: r["reply"]
        for r in map(json.loads, (SAMPLES / f"{name}.responses.jsonl").read_text().splitlines())
    }
    for request in requests:
        request["raw"] = request["raw"].encode("utf-8")
        request["reply"] = replies.get(request["seq"], {})
    return requests


def response_body(reply: dict, next_raw: bytes | None) -> dict:
    """An OpenAI chat.completion for a reply script, with the tool-call ids the next request used."""
    message: dict = {"role": "assistant", "content": reply.get("text")}
    if reply.get("tool_calls"):
        ids = _issued_ids(next_raw)
        message["tool_calls"] = [
            {
                "id": ids.get(call["name"], f"call_{index}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                },
            }
            for index, call in enumerate(reply["tool_calls"])
        ]
    finish = "tool_calls" if reply.get("tool_calls") else "stop"
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def _issued_ids(raw: bytes | None) -> dict[str, str]:
    if raw is None:
        return {}
    ids = {}
    for message in json.loads(raw)["messages"]:
        for call in message.get("tool_calls") or []:
            ids[call["function"]["name"]] = call["id"]  # the last one issued wins
    return ids


class Command(BaseCommand):
    help = "Post the bundled sample calls to a running Callscope, live."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000")
        parser.add_argument("--key-file", required=True)
        parser.add_argument("--speed", type=float, default=1.0, help="2 = twice as fast")
        parser.add_argument("--stagger", type=float, default=2.0, help="seconds between calls")
        parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the server")

    def handle(self, url, key_file, speed, stagger, wait, **options):
        key = Path(key_file).read_text().strip()
        self._wait_for(url, wait)
        run = datetime.now(UTC).strftime("%H%M%S")
        threads = []
        for index, name in enumerate(SCENARIOS):
            thread = threading.Thread(
                target=self._replay,
                args=(url, key, name, f"demo-{name}-{run}", index * stagger, speed),
            )
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        self.stdout.write(f"Replayed {len(SCENARIOS)} sample calls to {url}.")

    def _wait_for(self, url: str, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            try:
                urllib.request.urlopen(f"{url}/login/", timeout=2).close()
                return
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise CommandError(f"Callscope did not answer at {url} within {wait:.0f}s.")
                time.sleep(0.25)

    def _replay(self, url, key, name, call_id, delay, speed):
        time.sleep(delay)
        requests = load_scenario(name)
        first = datetime.fromisoformat(requests[0]["received_at"])
        started = time.monotonic()
        start_wall = datetime.now(UTC)
        for index, request in enumerate(requests):
            offset = (datetime.fromisoformat(request["received_at"]) - first).total_seconds()
            time.sleep(max(0.0, started + offset / speed - time.monotonic()))
            sent_at = start_wall + timedelta(seconds=offset / speed)
            self._post(
                f"{url}/api/v1/calls/{call_id}/requests",
                key,
                request["raw"],
                {
                    "X-Agent": "pipecat-1.1.0 sample",
                    "X-Sent-At": sent_at.isoformat(),
                    "Idempotency-Key": f"{call_id}-{request['seq']}",
                },
            )
            next_raw = requests[index + 1]["raw"] if index + 1 < len(requests) else None
            time.sleep(0.3 / speed)  # the model "thinks"
            event = {
                "type": "response",
                "id": f"response-{request['seq']}",
                "body": response_body(request["reply"], next_raw),
            }
            self._post(f"{url}/api/v1/calls/{call_id}/events", key, json.dumps(event).encode(), {})
        time.sleep(1.0 / speed)
        ended = json.dumps({"type": "call.ended", "id": "ended"}).encode()
        self._post(f"{url}/api/v1/calls/{call_id}/events", key, ended, {})

    def _post(self, url: str, key: str, body: bytes, headers: dict) -> None:
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {key}",
                "Content-Type": "application/json",
                **headers,
            },
        )
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except urllib.error.HTTPError as exc:
            self.stderr.write(f"{url}: HTTP {exc.code} {exc.read()[:300]!r}")
