"""Request guards for the web app (plain ASGI middleware, so they wrap every Gradio route):

- Host check: a request must name the address the app is bound to, a loopback name, or a name in
  RAG_UI_ALLOWED_HOSTS. A page on another site that re-points its own name at 127.0.0.1 (DNS rebinding) is refused.
- Origin check: a browser request sent from another origin is refused, so a web page the user visits cannot drive
  the local app. Requests without an Origin header (curl, the Gradio client) are not browser cross-site requests.
- Login throttling: after LOGIN_FAILURES wrong passwords from one client within LOGIN_WINDOW seconds, that client's
  logins are refused (429) for a lockout that doubles with each further failure, up to LOGIN_MAX_LOCKOUT. Every
  failure is logged with the client's address.
"""

from __future__ import annotations

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

log = logging.getLogger("rag.ui")
LOOPBACK = {"localhost", "127.0.0.1", "::1"}
ANY_ADDRESS = {"0.0.0.0", "::", ""}
LOGIN_FAILURES = 5
LOGIN_WINDOW = 300.0  # seconds in which failures are counted
LOGIN_LOCKOUT = 30.0  # seconds, doubled with each failure beyond the limit
LOGIN_MAX_LOCKOUT = 900.0


def hostname(value: str) -> str:
    """The host name of a Host header or an origin url, lower case, without port or IPv6 brackets."""
    netloc = urlsplit(value if "//" in value else f"//{value}").hostname
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
    """ASGI middleware applying the host, origin and login checks in front of the app."""

    def __init__(self, app: ASGIApp, allowed: Allowed, throttle: LoginThrottle | None = None) -> None:
        self.app = app
        self.allowed = allowed
        self.throttle = throttle or LoginThrottle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self.refusal(headers)
        if refusal:
            await respond(send, 403, refusal) if scope["type"] == "http" else await send({"type": "websocket.close"})
            return
        if scope["type"] == "http" and scope.get("method") == "POST" and scope["path"].rstrip("/").endswith("/login"):
            await self.login(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, headers: dict[str, str]) -> str | None:
        host = hostname(headers.get("host", ""))
        if not self.allowed.host(host):
            return f"host {host or '(none)'} is not served here (add it to RAG_UI_ALLOWED_HOSTS to allow it)"
        origin = headers.get("origin")
        if origin is None or urlsplit(origin).netloc.lower() == headers["host"].lower():
            return None  # not a browser request from another site
        if hostname(origin) in self.allowed.extra or "*" in self.allowed.extra:
            return None
        return "cross-origin requests are not accepted (add the origin's host to RAG_UI_ALLOWED_HOSTS)"

    async def login(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self.throttle.wait(client, time.monotonic())
        if wait > 0:
            retry = f"{wait:.0f}"
            await respond(send, 429, f"too many failed logins: try again in {retry} s", {"retry-after": retry})
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


async def respond(send: Send, status: int, detail: str, extra: dict[str, str] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
