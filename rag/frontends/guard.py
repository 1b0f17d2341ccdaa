"""One request guard for every HTTP surface (the web app, the API, the MCP endpoint): plain ASGI middleware, so it
wraps every route, whatever framework serves it. Every refusal is answered the same way: a status and an
OpenAI-style JSON body, {"error": {"message", "type", "param", "code"}}.

- Host: a request must name the address the server is bound to, a loopback name, or a name in RAG_ALLOWED_HOSTS,
  so that a web page re-pointing its own name at 127.0.0.1 (DNS rebinding) cannot read the server. Checked whenever
  no API key is set (with keys, the key is the check, and the server may be reached by any name).
- Origin: a browser request sent from another origin is refused (403) when no key is set; with keys, a state-changing
  one (anything but GET, HEAD, OPTIONS) still is. Requests without an Origin (curl, SDKs) are not browser requests.
- Keys: `Authorization: Bearer KEY` on every route but the open ones, when keys are set (401 otherwise).
- Body size: at most `max_body` bytes, counted while the body is read, whatever its framing (a Content-Length over
  the limit is refused at once, a chunked body as soon as it passes the limit): 413, and the rest is never read.
- Logins (the web app): after LOGIN_FAILURES wrong passwords from one client within LOGIN_WINDOW seconds, that
  client's logins are refused (429) for a lockout that doubles with each further failure, up to LOGIN_MAX_LOCKOUT.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("rag.guard")
LOOPBACK = {"localhost", "127.0.0.1", "::1"}
ANY_ADDRESS = {"0.0.0.0", "::", ""}
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LOGIN_FAILURES = 5
LOGIN_WINDOW = 300.0  # seconds in which failures are counted
LOGIN_LOCKOUT = 30.0  # seconds, doubled with each failure beyond the limit
LOGIN_MAX_LOCKOUT = 900.0


class ApiError(Exception):
    """An error answered as OpenAI does: {"error": {"message", "type", "param", "code"}} with an HTTP status (and
    headers such as Retry-After): the guard's refusals and the API's errors alike."""

    def __init__(
        self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(message)
        self.status, self.message, self.kind, self.code, self.headers = status, message, kind, code, headers

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": self.code}}


def hostname(value: str) -> str:
    """The host name of a Host header or an origin url, lower case, without port or IPv6 brackets."""
    try:
        netloc = urlsplit(value if "//" in value else f"//{value}").hostname
    except ValueError:  # a malformed header ("[::1")
        return ""
    return (netloc or "").lower()


@dataclass
class Allowed:
    """Which host names requests may name: the bound address, loopback names and an allow-list (host names or "*")."""

    bound: str
    extra: frozenset[str] = frozenset()

    @classmethod
    def of(cls, bound: str, allow_list: str) -> Allowed:
        names = {name.strip().lower() for name in allow_list.split(",") if name.strip()}
        return cls(hostname(bound) if bound not in ANY_ADDRESS else bound, frozenset(names))

    def host(self, name: str) -> bool:
        if "*" in self.extra or name in self.extra or name in LOOPBACK or name == self.bound:
            return True
        return self.bound in ANY_ADDRESS and not self.extra  # bound to every address, no list: any name reaches it

    def origin(self, origin: str) -> bool:
        """An origin whose pages may call the server: one on an allowed host or listed."""
        return "*" in self.extra or hostname(origin) in self.extra


@dataclass(frozen=True)
class Policy:
    """What the guard checks: the hosts, the API keys (none: host and origin checks instead), the routes open
    without a key, the body-size limit in bytes (None: none) and whether logins are throttled."""

    allowed: Allowed
    keys: frozenset[str] = frozenset()
    open_paths: frozenset[str] = frozenset()
    max_body: int | None = None
    max_body_reason: str = ""
    throttle_logins: bool = False

    def check(self, method: str, path: str, headers: dict[str, str]) -> None:
        """Raise the ApiError a request meets, if any."""
        host = headers.get("host", "")
        origin = headers.get("origin")
        foreign = origin is not None and urlsplit(origin).netloc.lower() != host.lower()
        if not self.keys:
            if not self.allowed.host(hostname(host)):
                name = hostname(host) or "(none)"
                raise ApiError(403, f"host {name} is not served here (add it to RAG_ALLOWED_HOSTS to allow it)",
                              "permission_error", "host_not_allowed")  # fmt: skip
            if foreign and not self.allowed.origin(origin or ""):
                raise ApiError(403, "cross-origin requests are not accepted (add the origin's host to "
                              "RAG_ALLOWED_HOSTS)", "permission_error", "origin_not_allowed")  # fmt: skip
            return
        if foreign and method not in SAFE_METHODS and not self.allowed.origin(origin or ""):
            raise ApiError(403, "cross-origin writes are not accepted", "permission_error", "origin_not_allowed")
        if path not in self.open_paths:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or given.strip() not in self.keys:
                raise ApiError(401, "missing or wrong API key (Authorization: Bearer ...)", "invalid_request_error",
                              "invalid_api_key")  # fmt: skip

    def too_large(self) -> ApiError:
        return ApiError(413, self.max_body_reason or f"the request body is larger than {self.max_body:,} bytes",
                       "invalid_request_error", "request_too_large")  # fmt: skip


@dataclass
class LoginThrottle:
    """Failed logins per client address, and until when each client is locked out."""

    failures: dict[str, list[float]] = field(default_factory=dict)
    locked_until: dict[str, float] = field(default_factory=dict)

    def wait(self, client: str, now: float) -> float:
        """Seconds this client must wait before trying again (0: it may try)."""
        return max(0.0, self.locked_until.get(client, 0.0) - now)

    def failed(self, client: str, now: float) -> None:
        recent = [t for t in self.failures.get(client, []) if now - t < LOGIN_WINDOW] + [now]
        self.failures[client] = recent
        beyond = len(recent) - LOGIN_FAILURES
        if beyond >= 0:
            self.locked_until[client] = now + min(LOGIN_LOCKOUT * 2**beyond, LOGIN_MAX_LOCKOUT)
        log.warning("failed login from %s (%d in the last %d s)", client, len(recent), LOGIN_WINDOW)

    def succeeded(self, client: str) -> None:
        self.failures.pop(client, None)
        self.locked_until.pop(client, None)


class Guard:
    """ASGI middleware applying the policy in front of the app."""

    def __init__(self, app: ASGIApp, policy: Policy, throttle: LoginThrottle | None = None) -> None:
        self.app = app
        self.policy = policy
        self.throttle = throttle or LoginThrottle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            self.policy.check(scope.get("method", "GET"), scope["path"], headers)
            length = headers.get("content-length", "")
            if self.policy.max_body is not None and length.isdigit() and int(length) > self.policy.max_body:
                raise self.policy.too_large()
        except ApiError as refusal:
            if scope["type"] == "http":
                await respond(send, refusal)
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and self.policy.max_body is not None:
            receive, send, stopped = self.limited(receive, send)
            try:
                await self._serve(scope, receive, send, headers)
            except Exception:
                if not stopped():
                    raise  # an error of the app's own; once the body was refused, what the app makes of it is moot
            return
        await self._serve(scope, receive, send, headers)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if (
            self.policy.throttle_logins
            and scope.get("method") == "POST"
            and scope["path"].rstrip("/").endswith("/login")
        ):
            await self.login(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def limited(self, receive: Receive, send: Send) -> tuple[Receive, Send, Callable[[], bool]]:
        """`receive` counting the body's bytes (past the limit: the 413 is sent and the app told the client left),
        `send` that drops what the app sends after that, and whether the body was refused."""
        read = 0
        refused = False
        started = False

        async def counted() -> Message:
            nonlocal read, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > (self.policy.max_body or 0):
                    refused = True
                    if not started:
                        await respond(send, self.policy.too_large())
                    return {"type": "http.disconnect"}
            return message

        async def passed(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        return counted, passed, lambda: refused

    async def login(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self.throttle.wait(client, time.monotonic())
        if wait > 0:
            retry = f"{wait:.0f}"
            message = f"too many failed logins: try again in {retry} s"
            await respond(send, ApiError(429, message, "rate_limit_error", "too_many_logins", {"retry-after": retry}))
            return
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, receive, watch)
        if status and status[0] == 400:
            self.throttle.failed(client, time.monotonic())
        elif status and status[0] < 300:
            self.throttle.succeeded(client)


async def respond(send: Send, refusal: ApiError) -> None:
    body = json.dumps(refusal.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (refusal.headers or {}).items()]
    headers += [(b"connection", b"close")] if refusal.status == 413 else []
    with contextlib.suppress(OSError):
        await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
