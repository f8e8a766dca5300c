"""The MCP server: the vault's library calls as MCP tools (``mcp_tools``), over stdio or streamable HTTP.

``create_server(served)`` builds an ``MCPServer`` (the official SDK, 2.x) whose tools each call
``Vault`` (or, for the searches, a ``Reader``) once and answer with ``render.mcp`` of the result —
compact hits (id, type, title, key line, score) and whole notes from ``get``/``multi_get``, as text
for the model and the same shapes as ``--json`` (or a selection of them) as structured content,
with the answer's warnings. Library errors come back as tool errors with the library's message (what
is wrong and what to do), never as a crash. One server may serve several vaults (``--vaults``).

On stdio nothing but protocol may reach stdout: while serving, stray prints go to stderr. Over HTTP
the server binds loopback unless given a bearer token, and reads run in parallel (``lanes``).
"""

from __future__ import annotations

import hmac
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer

from ..core.errors import MdmemError
from ..core.version import __version__
from .lanes import open_lane, read_lanes, warm_up
from .mcp_tools import Served, Tools, tools_of

if TYPE_CHECKING:
    from ..api.vault import Vault

INSTRUCTIONS = """\
mdmem is long-term memory kept as markdown notes in a git repository; people edit the same notes.
- Before answering anything that may depend on earlier work, preferences or decisions, call recall
  with the user's question. Hits are compact; call get (or multi_get) for whole notes.
- search finds exact words and identifiers (error codes, file names); vsearch finds meaning.
- Save what will matter in a later session with add: one decision, preference, fact or lesson per
  note, a clear title, the right type. Do not save chit-chat or what the code or git log already says.
- When a memory is wrong or outdated, correct it (never add a contradicting copy). pin only standing
  rules the user wants in every session; snooze what is noise for now; forget what is wrong for good.
"""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def create_server(
    served: Served,
    *,
    lock: threading.Lock | None = None,
    lifespan: Callable[[Any], Any] | None = None,
    tools: Tools | None = None,
) -> MCPServer:
    """An MCP server whose tools call the vaults ``served`` names (``tools``: its calls, else one at a
    time under ``lock``)."""
    server: MCPServer = MCPServer(
        "mdmem", instructions=INSTRUCTIONS, version=__version__, lifespan=lifespan, log_level="WARNING"
    )
    for fn, hints in tools_of(tools or Tools(served, lock or threading.Lock())):
        server.add_tool(fn, name=fn.__name__, annotations=hints)
    return server


def _warm_all(vaults: list[Vault], lock: threading.Lock) -> None:
    for v in vaults:
        warm_up(v, lock, "mdmem mcp")


def open_lanes(tools: Tools, count: int, *, warm: bool = True) -> None:
    """Give ``tools`` ``count`` reading lanes on its one vault (``lanes.open_lane``); a lane joins once
    ready, so reads wait for none. Several vaults served: no lanes."""
    if tools.served.group is not None:
        return
    for _ in range(count):
        lane = open_lane(tools.served.primary, warm=warm, who="mdmem mcp")
        if lane is None:
            return
        if not tools.add_lane(Served(lane)):
            lane.close()
            return


def _warm_http(tools: Tools, lock: threading.Lock, warm: bool) -> None:
    if warm:
        _warm_all(tools.served.vaults, lock)
    open_lanes(tools, read_lanes(), warm=warm)


# -- running ---------------------------------------------------------------------------------------------


@asynccontextmanager
async def _stdout_to_stderr(_: Any) -> AsyncIterator[dict[str, Any]]:
    """While serving stdio, print() goes to stderr: the SDK already owns the wire, and buffered stray
    output would otherwise be flushed onto it when the descriptors are restored at exit."""
    real = sys.stdout
    real.flush()
    sys.stdout = sys.stderr
    try:
        yield {}
    finally:
        sys.stdout = real


def run_stdio(served: Served, *, warm: bool = True) -> None:
    """Serve MCP on stdin/stdout until the client closes the pipe (``warm``: every vault served warms up first)."""
    lock = threading.Lock()
    server = create_server(served, lock=lock, lifespan=_stdout_to_stderr)
    if warm:
        threading.Thread(target=_warm_all, args=(served.vaults, lock), daemon=True).start()
    server.run("stdio")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (and under the SDK's Host checks)."""
    return host in LOOPBACK_HOSTS


class BearerAuth:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer TOKEN`` (401 otherwise)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
                body = b'{"error": "missing or wrong bearer token"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b'Bearer realm="mdmem"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token."""
    if not is_loopback(host) and not token:
        raise MdmemError(
            f"Binding {host} exposes the vault beyond this machine: give a bearer token with "
            '--token TOKEN or $MDMEM_MCP_TOKEN (clients send "Authorization: Bearer TOKEN").'
        )


def http_app(
    served: Served, *, host: str, token: str | None, lock: threading.Lock | None = None, tools: Tools | None = None
) -> Any:
    """The streamable-HTTP ASGI app at /mcp, behind the bearer check when a token is set."""
    check_bind(host, token)
    app = create_server(served, lock=lock, tools=tools).streamable_http_app(host=host)
    return BearerAuth(app, token) if token else app


def run_http(served: Served, *, host: str, port: int, token: str | None, warm: bool = True) -> None:
    """Serve MCP over streamable HTTP at http://HOST:PORT/mcp until interrupted: reads in parallel on
    ``read_lanes()`` views of the vault once they are ready, writes one at a time."""
    import uvicorn

    lock = threading.Lock()
    tools = Tools(served, lock)
    app = http_app(served, host=host, token=token, tools=tools)
    threading.Thread(target=_warm_http, args=(tools, lock, warm), daemon=True).start()
    print(
        f"mdmem mcp: serving {served.primary.root} at http://{host}:{port}/mcp"
        + (" (bearer token required)" if token else ""),
        file=sys.stderr,
        flush=True,
    )
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
