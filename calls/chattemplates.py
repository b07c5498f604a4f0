"""The text a model sees: a request rendered through a chat template.

Open-weight servers (vLLM, SGLang, llama.cpp, TGI) turn the messages into one
string with the model's Jinja chat template before the model reads a token,
and that is where a `developer` message can vanish or a second tool call can
make the server answer 500. Rendering happens in Jinja's sandbox with the
environment Hugging Face transformers uses (`tojson` keeps non-ASCII and key
order and escapes no HTML, `raise_exception`, trimmed blocks), so a template
behaves here as it does on the server. Pure functions; no ORM.
"""

import json
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .normalize import Request

SHIPPED_DIR = Path(__file__).parent / "chat_templates"
SHIPPED = {
    "chatml": ("ChatML (Qwen2.5-style)", {"bos_token": "", "eos_token": "<|im_end|>"}),
    "llama3": ("Llama 3.1-style", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    "mistral": ("Mistral-style [INST]", {"bos_token": "<s>", "eos_token": "</s>"}),
}
MAX_OUTPUT = 5_000_000  # characters; a template that loops forever is stopped here


class TemplateFailed(Exception):
    """The template raised (raise_exception) or could not be compiled or run."""


@dataclass
class RoleLine:
    index: int  # in the provider's own array
    role: str  # as sent
    template_role: str  # as handed to the template
    text: str
    shown: bool  # its text appears in the rendered output
    note: str = ""
    calls: tuple[str, ...] = ()  # names of the tools it calls


@dataclass
class Rendering:
    text: str = ""
    error: str = ""  # the template's own message, e.g. "Conversation roles must alternate ..."
    roles: list[RoleLine] = field(default_factory=list)


class _Generation(Extension):
    """transformers' `{% generation %}` marks assistant text for training masks;
    rendering ignores it, as it does for inference."""

    tags = {"generation"}

    def parse(self, parser):
        next(parser.stream)
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body)


def _raise(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


@lru_cache(maxsize=64)
def _compile(source: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_Generation, "jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(source)


def shipped_source(name: str) -> str:
    return (SHIPPED_DIR / f"{name}.jinja").read_text("utf-8")


def chat_messages(request: Request) -> tuple[list[dict], list[RoleLine]]:
    """The request as the OpenAI-style message dicts chat templates expect (arguments
    decoded to objects, as vLLM does), with each message's role before and after."""
    messages, lines = [], []
    for instruction in request.instructions if request.format != "openai.chat" else ():
        messages.append({"role": "system", "content": instruction.text})
        lines.append(RoleLine(-1, instruction.source, "system", instruction.text, False))
    for message in request.messages:
        role = {"model": "assistant", "function": "tool"}.get(message.role, message.role)
        entry: dict = {"role": role, "content": message.text}
        if message.calls:
            entry["tool_calls"] = [
                {
                    "id": call.tool_call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments(call.arguments)},
                }
                for call in message.calls
            ]
        if message.results:
            result = message.results[0]
            entry.update(role="tool", content=result.text, tool_call_id=result.tool_call_id)
        if entry["role"] == "tool" and not message.results:
            continue
        messages.append(entry)
        text = entry["content"] or ""
        lines.append(
            RoleLine(
                message.index, message.provider_role or message.role, entry["role"], text, False,
                calls=tuple(c.name for c in message.calls),
            )
        )
    return messages, lines


def _arguments(text: str):
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def render(
    source: str, request: Request, special: dict | None = None, isolated: bool = False
) -> Rendering:
    """`isolated`: run the template in a child process with time and memory limits (for
    templates a project uploaded: a sandbox stops attribute tricks, not an endless loop)."""
    messages, lines = chat_messages(request)
    tools = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters or {}}}
        for t in request.tools
    ]
    arguments = {"messages": messages, "tools": tools or None, "special": special or {}}
    text, error = _isolated(source, arguments) if isolated else render_text(source, **arguments)
    rendering = Rendering(roles=lines, error=error)
    if error:
        return rendering
    rendering.text = text
    for line in lines:
        line.shown = bool(line.text.strip()) and line.text.strip() in text
        if not line.text.strip() and line.calls:
            line.shown = all(name in text for name in line.calls)
            line.note = "tool calls shown" if line.shown else "dropped: its tool calls are not in the prompt"
        elif not line.text.strip():
            line.note = "no text"
        elif not line.shown:
            line.note = "dropped: the model never sees this text"
        elif line.role != line.template_role:
            line.note = f"sent as {line.role}, rendered as {line.template_role}"
    return rendering


def render_text(source: str, messages: list, tools, special: dict) -> tuple[str, str]:
    """(prompt text, error): the template's own message when it refuses, or why it failed."""
    try:
        template = _compile(source)
        pieces, size = [], 0
        for piece in template.generate(
            messages=messages, tools=tools, add_generation_prompt=True,
            **{"bos_token": "", "eos_token": "", **special},
        ):
            pieces.append(piece)
            size += len(piece)
            if size > MAX_OUTPUT:
                return "", f"The template wrote more than {MAX_OUTPUT:,} characters: stopped."
        return "".join(pieces), ""
    except jinja2.exceptions.TemplateError as error:
        return "", str(error) or error.__class__.__name__
    except Exception as error:  # a template is code someone uploaded: any failure is its own
        return "", f"{error.__class__.__name__}: {error}"


TIME_LIMIT_SECONDS = 5
MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024


def _limits():  # pragma: no cover - runs in the child before it starts
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (TIME_LIMIT_SECONDS, TIME_LIMIT_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def _isolated(source: str, arguments: dict) -> tuple[str, str]:
    request = json.dumps({"source": source, **arguments}).encode()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "calls.templaterunner"],
            input=request, capture_output=True, timeout=TIME_LIMIT_SECONDS + 2,
            cwd=Path(__file__).resolve().parent.parent, preexec_fn=_limits,
        )
    except subprocess.TimeoutExpired:
        return "", f"The template ran for more than {TIME_LIMIT_SECONDS} s: stopped."
    if done.returncode != 0:
        return "", "The template used more time or memory than allowed: stopped."
    answer = json.loads(done.stdout)
    return answer["text"], answer["error"]


def from_tokenizer_config(text: str) -> tuple[str, dict]:
    """(chat template, special tokens) from a tokenizer_config.json."""
    config = json.loads(text)
    if not isinstance(config, dict):
        raise ValueError("tokenizer_config.json must be a JSON object.")
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: the default one
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default") or next(iter(named.values()), None)
    if not isinstance(template, str) or not template.strip():
        raise ValueError("This tokenizer_config.json has no chat_template.")
    special = {}
    for name in ("bos_token", "eos_token", "unk_token", "pad_token"):
        value = config.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            special[name] = value
    return template, special


def check_source(source: str) -> str:
    """'' when the template compiles, else why not."""
    try:
        _compile(source)
    except jinja2.exceptions.TemplateError as error:
        return str(error)
    return ""


@lru_cache(maxsize=4)
def _tokenizer(tokenizer_json: str):
    from tokenizers import Tokenizer

    return Tokenizer.from_str(tokenizer_json)


def tokens(tokenizer_json: str, text: str, limit: int = 3000) -> tuple[int, list[tuple[int, str]]]:
    """(token count, the first `limit` (id, piece) pairs) of `text` under this tokenizer."""
    encoding = _tokenizer(tokenizer_json).encode(text, add_special_tokens=False)
    return len(encoding.ids), list(zip(encoding.ids[:limit], encoding.tokens[:limit]))


def check_tokenizer(tokenizer_json: str) -> str:
    try:
        _tokenizer(tokenizer_json)
    except Exception as error:  # the library raises bare Exceptions for bad files
        return str(error).splitlines()[0][:300] or "not a tokenizer.json"
    return ""
