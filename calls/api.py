"""The ingest API for agents: authentication, limits, exact bytes, JSON errors.

Every refusal is `{"error": {"code", "message"}}` with a stable code, and
happens before anything is written.
"""

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from . import analysis, capture, dryrun, events, history, keys, projectrules, rfc3339
from .models import Call, Turn
from .requestbody import BodyError, decode_json, parse_request

MAX_CALL_ID_LENGTH = 200
MAX_HEADER_VALUE_LENGTH = 200


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> JsonResponse:
    response = JsonResponse({"error": {"code": code, "message": message}}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="callscope"'
    return response


def endpoint(*methods: str) -> Callable:
    """An API view: method check, ingest-key auth, and ApiError -> JSON error."""

    def decorate(view):
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs):
            if request.method not in methods:
                response = error_response(
                    405, "method_not_allowed", f"Use {' or '.join(methods)} on this URL."
                )
                response["Allow"] = ", ".join(methods)
                return response
            try:
                request.project = _authenticated_project(request)
                if "call_id" in kwargs:
                    _check_call_id(kwargs["call_id"])
                return view(request, *args, **kwargs)
            except ApiError as exc:
                return error_response(exc.status, exc.code, exc.message)
            except BodyError as exc:
                return error_response(400, exc.code, exc.message)

        return wrapper

    return decorate


def _authenticated_project(request: HttpRequest):
    header = request.headers.get("Authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise ApiError(401, "missing_key", "Send your ingest key as `Authorization: Bearer <key>`.")
    key = keys.authenticate(secret.strip())
    if key is None:
        raise ApiError(401, "invalid_key", "This ingest key is not known.")
    if not key.is_active:
        raise ApiError(401, "revoked_key", "This ingest key was revoked.")
    return key.project


def _check_call_id(call_id: str) -> None:
    if len(call_id) > MAX_CALL_ID_LENGTH or not call_id.isprintable():
        raise ApiError(
            400,
            "invalid_call_id",
            f"A call id must be printable and at most {MAX_CALL_ID_LENGTH} characters.",
        )


def _json_body(request: HttpRequest) -> bytes:
    """The exact body bytes, after size and content-type checks."""
    limit = settings.CALLSCOPE_MAX_BODY_BYTES
    too_big = ApiError(413, "body_too_large", f"The body is larger than the limit of {limit} bytes.")
    try:
        if int(request.headers.get("Content-Length") or 0) > limit:
            raise too_big
        body = request.body
    except (RequestDataTooBig, ValueError):
        raise too_big from None
    if len(body) > limit:
        raise too_big
    if not body:
        raise ApiError(400, "empty_body", "The body is empty.")
    content_type = request.headers.get("Content-Type", "")
    if len(content_type) > MAX_HEADER_VALUE_LENGTH:
        raise ApiError(415, "unsupported_media_type", "The Content-Type header is too long.")
    media_type, _, params = content_type.partition(";")
    if media_type.strip().lower() != "application/json":
        raise ApiError(415, "unsupported_media_type", "Send the body as `application/json`.")
    parameters = dict(p.strip().lower().split("=", 1) for p in params.split(";") if "=" in p)
    if parameters.get("charset", "utf-8").strip('"') not in ("utf-8", "utf8"):
        raise ApiError(415, "unsupported_media_type", "The body must be UTF-8 JSON.")
    return body


def _header(request: HttpRequest, name: str) -> str | None:
    value = request.headers.get(name)
    if value is None:
        return None
    if len(value) > MAX_HEADER_VALUE_LENGTH or not value.isprintable():
        raise ApiError(
            400,
            "invalid_header",
            f"{name} must be printable and at most {MAX_HEADER_VALUE_LENGTH} characters.",
        )
    return value


@endpoint("POST")
def post_request(request: HttpRequest, call_id: str) -> JsonResponse:
    raw = _json_body(request)
    received_at = timezone.now()
    sent_at = received_at
    if (value := _header(request, "X-Sent-At")) is not None:
        sent_at = rfc3339.parse(value)
        if sent_at is None:
            raise ApiError(400, "invalid_sent_at", "X-Sent-At must be an RFC 3339 timestamp.")
    agent = _header(request, "X-Agent") or ""
    idempotency_key = _header(request, "Idempotency-Key")
    parsed = parse_request(raw, _header(request, "X-Request-Format"))
    try:
        captured = capture.record_request(
            request.project,
            call_id,
            raw,
            parsed,
            content_type=request.headers["Content-Type"],
            received_at=received_at,
            sent_at=sent_at,
            agent=agent[:100],
            idempotency_key=idempotency_key,
        )
    except capture.IdempotencyConflict:
        raise ApiError(
            409,
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a different body in this call.",
        ) from None
    turn = captured.turn
    response = JsonResponse(
        {
            "call": call_id,
            "turn": turn.number,
            "url": request.build_absolute_uri(turn.get_absolute_url()),
            "findings": [f.as_json() for f in captured.findings],
        },
        status=201,
    )
    if captured.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


@endpoint("POST")
def post_events(request: HttpRequest, call_id: str) -> JsonResponse:
    raw = _json_body(request)
    incoming = events.parse_events(raw, _header(request, "Idempotency-Key"))
    try:
        recorded = events.record_events(request.project, call_id, incoming, timezone.now())
    except events.EventConflict:
        raise ApiError(
            409,
            "idempotency_key_reused",
            "An event id or Idempotency-Key of this post was already used for a different event.",
        ) from None
    return JsonResponse(
        {
            "call": recorded.call.external_id,
            "stored": recorded.stored,
            "duplicates": recorded.duplicates,
            "findings": [f.as_json() for f in recorded.findings],
        },
        status=201 if recorded.stored else 200,
    )


@endpoint("GET")
def get_call(request: HttpRequest, call_id: str) -> JsonResponse:
    call = _call(request, call_id)
    turns = Turn.objects.filter(call=call).order_by("number").defer("raw_blob", "snapshot")
    findings = [f.as_json() for f in call.findings.order_by("turn", "pk")]
    by_turn: dict[int, list] = {}
    for finding in findings:
        by_turn.setdefault(finding["turn"], []).append(finding)
    return JsonResponse(
        {
            "call": call.external_id,
            "project": call.project.slug,
            "agent": call.agent,
            "model": call.model,
            "status": call.status,
            "started_at": call.started_at.isoformat(),
            "last_activity_at": call.last_activity_at.isoformat(),
            "ended_at": call.ended_at.isoformat() if call.ended_at else None,
            "turn_count": call.turn_count,
            "event_count": call.event_count,
            "tool_call_count": call.tool_call_count,
            "pending_placeholders": call.pending_placeholders,
            "findings_by_severity": {
                "error": call.findings_error,
                "warning": call.findings_warning,
                "info": call.findings_info,
            },
            "url": request.build_absolute_uri(call.get_absolute_url()),
            "turns": [_turn_json(request, call, turn, by_turn.get(turn.number, [])) for turn in turns],
            "tool_calls": [
                {
                    "tool_call_id": t.tool_call_id,
                    "name": t.name,
                    "arguments": t.arguments,
                    "issued_turn": t.issued_turn,
                    "state": t.state,
                    "history": t.history,
                }
                for t in call.tool_calls.order_by("issued_turn", "id")
            ],
            "findings": findings,
        }
    )


def _turn_json(request: HttpRequest, call: Call, turn: Turn, findings: list) -> dict:
    turn.call = call
    return {
        "turn": turn.number,
        "received_at": turn.received_at.isoformat(),
        "sent_at": turn.sent_at.isoformat(),
        "format": turn.format,
        "model": turn.model,
        "size": turn.size,
        "sha256": turn.body_sha256,
        "message_count": turn.message_count,
        "new_messages": max(0, turn.message_count - turn.previous_message_count),
        "changed_in_place": sum(1 for c in turn.changes if c[2] is not None),
        "url": request.build_absolute_uri(turn.get_absolute_url()),
        "findings": findings,
    }


@endpoint("GET")
def get_raw(request: HttpRequest, call_id: str, number: int) -> HttpResponse:
    call = _call(request, call_id)
    turn = Turn.objects.filter(call=call, number=number).first()
    if turn is None:
        raise ApiError(404, "turn_not_found", f"Call {call_id!r} has no turn {number}.")
    return HttpResponse(history.raw_body(turn), content_type=turn.content_type)


def _call(request: HttpRequest, call_id: str) -> Call:
    call = Call.objects.filter(project=request.project, external_id=call_id).first()
    if call is None:
        raise ApiError(404, "call_not_found", f"This project has no call {call_id!r}.")
    return call



def not_found(request: HttpRequest, exception=None) -> HttpResponse:
    """404s: JSON for agents on the API, the plain page for people."""
    if request.path.startswith("/api/"):
        return error_response(404, "not_found", "There is no API endpoint at this URL.")
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


@endpoint("POST")
def check(request: HttpRequest) -> JsonResponse:
    """The analysis of one request body, or of consecutive bodies of one call; stores nothing."""
    raw = _json_body(request)
    fmt = _header(request, "X-Request-Format")
    body = decode_json(raw)
    if isinstance(body, list):
        steps = dryrun.parse_steps(body, fmt)
        try:
            return JsonResponse({"requests": dryrun.check_sequence(request.project, steps)})
        except events.EventConflict:
            raise ApiError(
                409, "idempotency_key_reused",
                "Two steps use one event id for different events.",
            ) from None
    parsed = parse_request(raw, fmt)
    settings = request.project.rule_settings
    found = analysis.analyse_whole(parsed, projectrules.policy(settings))
    shown = [f for f in (projectrules.applied(settings, f) for f in found) if f is not None]
    return JsonResponse({"format": parsed.format, "findings": [analysis.finding_json(f) for f in shown]})


def server_error(request: HttpRequest) -> HttpResponse:
    """500s: JSON for agents on the API, the plain page for people."""
    if request.path.startswith("/api/"):
        return error_response(500, "internal_error", "Callscope failed to handle this request.")
    from django.views.defaults import server_error as default_server_error

    return default_server_error(request)
