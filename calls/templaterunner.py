"""Renders one chat template in a child process: `python -m calls.templaterunner`.

Reads {"source", "messages", "tools", "special"} as JSON on stdin and writes
{"text", "error"} on stdout. The parent (calls.chattemplates) sets time and
memory limits on this process, so a template a project uploaded cannot hang or
exhaust the server. No Django here: only Jinja and plain data.
"""

import json
import sys

from calls.chattemplates import render_text


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    text, error = render_text(
        request["source"], request["messages"], request["tools"], request["special"]
    )
    sys.stdout.write(json.dumps({"text": text, "error": error}))


if __name__ == "__main__":
    main()
