"""``mdmem serve``: a warm process on loopback that keeps the index and the model loaded.

The CLI's ``query``/``vsearch`` ask it first (``call_server``) and fall back to working alone.
It also fills missing vectors in the background, and exits after an idle timeout, when its
vault disappears, or when another server takes over — it never lingers as an orphan. Its work runs in
other threads while the main one waits for signals, so SIGTERM ends it within a second, mid-query
too; ``stop_server`` (``serve --stop``) needs no answer from it, and kills one that outlasts SIGTERM.
Requests run in parallel on reading lanes (``lanes``), as the HTTP MCP server's reads do.
"""

from __future__ import annotations

import hmac
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..index.state import SERVE_FILE, STATE_DIR, server_info, server_seal
from .lanes import Lanes, open_lane, read_lanes, warm_up

if TYPE_CHECKING:
    from ..api.vault import Vault

SERVE_LANES = 2  # reading lanes: reads run beside each other and the vector filling (none to starve but that)
FILL_BATCH = 8  # chunks the server embeds between requests when [embed] auto is off (a short pause)
STOP_GRACE = 0.7  # seconds a stopping server waits for the request or vector batch under way (longer than a batch)
KILL_AFTER = 1.0  # seconds ``stop_server`` gives SIGTERM before SIGKILL (the server needs at most STOP_GRACE)


def _info_path(root: Path) -> Path:
    return root / STATE_DIR / SERVE_FILE


def read_info(root: Path) -> dict[str, Any] | None:
    """The running server's address and token, or None if none is running."""
    return server_info(root)


def prove(root: Path, info: dict[str, Any]) -> bool:
    """Whether the process ``info`` names is this vault's server, live on this machine: asked with the
    token over loopback, it answers with that pid and this vault. Checked before any signal is sent: a
    pid in a stale or foreign ``serve.json`` may belong to another process by now."""
    answer = call_server(root, "whoami", {}, timeout=5.0, info=info)
    return answer is not None and answer.get("pid") == info.get("pid") and answer.get("vault") == str(root.resolve())


def is_server_process(info: dict[str, Any]) -> bool:
    """Whether the live process ``info`` names is one of this user's ``mdmem serve`` processes, started
    before it wrote ``info`` (Linux's ``/proc``; False elsewhere). Needs no answer from the process, so
    a server busy on a long request is recognised; a pid reused since belongs to a process that started
    after ``info`` was written, or runs something else."""
    try:
        pid = int(info["pid"])
        proc = Path(f"/proc/{pid}")
        if proc.stat().st_uid != os.getuid():
            return False
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        ticks = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[19])  # field 22: start, in ticks
        boot = next(int(ln.split()[1]) for ln in Path("/proc/stat").read_text().splitlines() if ln.startswith("btime "))
        written = float(info["started"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, StopIteration):
        return False
    started = boot + ticks / os.sysconf("SC_CLK_TCK")
    # boot time is given in whole seconds: a second of slack, the other way than a reused pid would lie
    return started <= written + 1.0 and b"serve" in argv and any(b"mdmem" in a for a in argv)


def gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (a zombie waiting for its parent counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return False


def stop_server(root: Path, info: dict[str, Any], kill_after: float = KILL_AFTER) -> str:
    """Stop the server ``info`` (``serve.json``) names, once proven to be this vault's (``is_server_process``,
    else ``prove``): SIGTERM, then SIGKILL if it is still there after ``kill_after`` seconds. Returns what
    was done; raises ``MdmemError`` when the pid is not proven (nothing is signalled then)."""
    from ..core.errors import MdmemError

    pid = int(info["pid"])
    if not (is_server_process(info) or prove(root, info)):  # never signal a pid the file names unproven
        raise MdmemError(
            f"No server of this vault answers as pid {pid} (its serve.json is stale); nothing was "
            "stopped. Remove .mdmem/serve.json if none runs."
        )
    os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, kill_after):
        return f"Stopped the server (pid {pid})."
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _wait_gone(pid, kill_after)
    now = server_info(root)
    if now is not None and now.get("token") == info.get("token"):  # a killed server leaves its file
        _info_path(root).unlink(missing_ok=True)
    return f"Stopped the server (pid {pid}): still running {kill_after:.0f} s after SIGTERM, it was killed."


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def call_server(
    root: Path, method: str, params: dict[str, Any], timeout: float = 60.0, info: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """Ask the vault's server: ``method`` "ask" with an ``Ask``'s dict, or "context" with the prompt's
    ("whoami": its pid and vault); None if there is no server or it failed. ``info``: the server's
    ``serve.json`` as read already."""
    if os.environ.get("MDMEM_NO_SERVE") and info is None:
        return None
    info = info or read_info(root)
    if info is None:
        return None
    params = with_client_now(method, params)
    # A plain HTTP/1.0 exchange over a socket: http.client imports email and ssl (slow to import), which the
    # prompt hook would pay on every prompt. The server answers and closes, so EOF ends the reply.
    import socket

    body = json.dumps({"method": method, "params": params}).encode()
    head = (
        f"POST /call HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {info['token']}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    try:
        with socket.create_connection(("127.0.0.1", int(info["port"])), timeout=timeout) as sock:
            sock.sendall(head + body)
            chunks = []
            while chunk := sock.recv(1 << 16):
                chunks.append(chunk)
        header, _, payload = b"".join(chunks).partition(b"\r\n\r\n")
        status = int(header.split(None, 2)[1])
        data = json.loads(payload)
    except (OSError, ValueError, IndexError):
        return None
    if status != 200 or not isinstance(data, dict):
        return None
    return data


def with_client_now(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The question as sent: the asker's $MDMEM_NOW travels as its ``as_of`` (unless it names one), so
    the server judges "last month", visibility and decay at the asker's now, not its own."""
    now = os.environ.get("MDMEM_NOW")
    if not now:
        return params
    if method == "context" and not params.get("as_of"):
        return {**params, "as_of": now}
    filters = dict(params.get("filters") or {})
    if method == "ask" and not filters.get("as_of"):
        return {**params, "filters": {**filters, "as_of": now}}
    return params


class Server:
    """One vault, HTTP on 127.0.0.1. The vault is not thread-safe, so requests run on lanes
    (``lanes.Lanes``): reads in parallel on ``read_lanes(SERVE_LANES)`` views of their own, the vector
    filling (the server's one write) on the first view, under ``lock``."""

    def __init__(
        self, root: Path, *, idle_timeout: float = 900.0, port: int = 0, fill_vectors: bool = True, warm: bool = True
    ) -> None:
        from ..api.vault import Vault

        self.vault = Vault.open(root)
        self.idle_timeout = idle_timeout
        self.port = port
        self.fill_vectors = fill_vectors
        self.warm = warm
        import secrets

        self.token = secrets.token_urlsafe(24)
        self.lock = threading.Lock()
        self.lanes: Lanes[Vault] = Lanes(self.vault, self.lock)
        self.waiting = 0  # requests waiting for or holding ``lock``: the vector filling yields to them
        self._count = threading.Lock()
        self.last_used = time.monotonic()
        self.stopping = threading.Event()
        self.httpd: Any = None
        self.warmed: dict[str, Any] | None = None

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request: "ask" (a retrieval question, ``Ask``) answers with the hits' dict; "context" (the
        prompt hook's: ``prompt``, ``budget``, ``scope``, ``vectors``, ``explain``) with the memory context's;
        "whoami" with its pid and vault (what ``prove`` checks before a signal is sent to this process)."""
        if method == "whoami":
            return {"pid": os.getpid(), "vault": str(self.vault.root.resolve())}
        if method not in ("ask", "context"):
            raise ValueError(f"unknown method {method!r}")
        from ..api.reader import Ask  # here, not at the top: the prompt hook imports this module to ask

        ask = Ask.from_dict(params) if method == "ask" else None
        with self._count:
            self.waiting += 1
        try:
            with self.lanes.lane(write=False) as vault:
                self.last_used = time.monotonic()
                if ask is not None:
                    answer = ask.of(vault).to_dict()
                else:
                    answer = {
                        "context": vault.context(
                            str(params["prompt"]),
                            int(params.get("budget", 600)),
                            scope=params.get("scope"),
                            vectors=params.get("vectors", True),
                            as_of=params.get("as_of"),
                            explain=bool(params.get("explain", False)),
                        ).to_dict()
                    }
                self.last_used = time.monotonic()
        finally:
            with self._count:
                self.waiting -= 1
        return answer

    def serve_forever(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                given = str(self.headers.get("Authorization", "")).encode()
                if not hmac.compare_digest(given, f"Bearer {server.token}".encode()):
                    self._reply(401, {"error": "missing or wrong token"})
                    return
                try:
                    length = max(0, min(int(self.headers.get("Content-Length", 0)), 1 << 20))
                    req = json.loads(self.rfile.read(length))
                    self._reply(200, server.handle(str(req["method"]), dict(req.get("params") or {})))
                except Exception as exc:  # report, keep serving
                    self._reply(400, {"error": f"{type(exc).__name__}: {exc}"})

            def _reply(self, status: int, data: dict[str, Any]) -> None:
                body = json.dumps(data, default=str).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        # The work (warm-up, requests, vectors) runs in other threads; this one waits for a signal: a
        # handler runs only in the main thread, and would wait behind a query running in it.
        work = threading.Thread(target=self._run, daemon=True, name="mdmem serve")
        work.start()
        try:
            while not self.stopping.wait(0.5):
                pass
        finally:
            self._finish()

    def _run(self) -> None:
        """Warm up, publish the address, then answer until stopped (in a thread of its own)."""
        try:
            if self.warm:  # clients find the server only once it is warm: none waits on a cold one
                self.warmed = warm_up(self.vault, self.lock)
            if self.stopping.is_set():
                return
            self._write_info()
            threading.Thread(target=self._watchdog, daemon=True).start()
            threading.Thread(target=self._open_lanes, daemon=True).start()
            if self.fill_vectors:
                threading.Thread(target=self._fill, daemon=True).start()
            self.httpd.serve_forever(poll_interval=0.5)
        finally:
            self.stopping.set()

    def _finish(self) -> None:
        """Stop answering and close the vault; within ``STOP_GRACE`` seconds, or exit at once: the work
        under way (a query, a vector batch) is given up as a SIGKILL would (every write survives that)."""
        self.stopping.set()
        closing = threading.Thread(
            target=self.httpd.shutdown, daemon=True
        )  # the serving loop notices within its poll interval
        closing.start()
        idle = self.lanes.quiesce(STOP_GRACE)  # every lane held until exit: no request starts on a closed vault
        self._remove_info()
        if not idle:
            import sys

            sys.stdout.flush()
            sys.stderr.flush()
            # not a normal exit: the vault cannot be closed under the request, and the interpreter's
            # shutdown while the model runs in a thread aborts the process
            os._exit(0)
        closing.join(timeout=1.0)  # one poll of the loop (a second if it never started)
        self.httpd.server_close()
        for lane in self.lanes.views:
            lane.close()
        self.vault.close()

    def _open_lanes(self) -> None:
        """The reading lanes, each joining once warm (reads meanwhile run on the first view)."""
        for _ in range(read_lanes(SERVE_LANES)):
            lane = None if self.stopping.is_set() else open_lane(self.vault, warm=self.warm)
            if lane is None:
                return
            if not self.lanes.add(lane):  # stopping meanwhile
                lane.close()
                return

    def stop(self) -> None:
        """Stop serving (what SIGTERM and the watchdog call): ``serve_forever`` returns soon after."""
        self.stopping.set()

    def _write_info(self) -> None:
        from ..adapters.files import atomic_write

        path = _info_path(self.vault.root)
        path.parent.mkdir(exist_ok=True)
        info: dict[str, Any] = {
            "pid": os.getpid(),
            "port": self.port,
            "token": self.token,
            "started": time.time(),
            "vault": str(self.vault.root.resolve()),
            "warm": self.warmed,
        }
        info["seal"] = server_seal(info)  # a serve.json that came with a clone has none: no server
        atomic_write(path, json.dumps(info), mode=0o600)  # the token is a secret

    def _remove_info(self) -> None:
        if self._still_mine():
            try:
                _info_path(self.vault.root).unlink()
            except OSError:
                pass

    def _still_mine(self) -> bool:
        """Whether ``serve.json`` is still this server's (read as ``server_info`` reads it: sealed, small,
        never through a link)."""
        info = server_info(self.vault.root)
        return info is not None and info.get("token") == self.token

    def _watchdog(self) -> None:
        while not self.stopping.wait(1.0):
            idle = time.monotonic() - self.last_used
            if idle > self.idle_timeout or not self.vault.root.is_dir() or not self._still_mine():
                self.stop()
                return

    def _fill(self) -> None:
        """Keep vectors complete without making a request wait. With ``[embed] auto`` on (the default)
        that is the vault's own keep-up: inline for a few chunks, else the background embedding job,
        another process whose vectors the next read picks up. With it off, this thread embeds
        ``FILL_BATCH`` chunks at a time, only while no request is waiting."""
        from ..core.errors import LockHeld

        while not self.stopping.is_set():
            pause = 10.0
            try:
                if self.waiting:
                    pause = 0.05
                else:
                    # Never waits for the writer lock: this thread holds the server's lock, so every
                    # query would wait with it (up to lock_timeout, 30 s) while another process writes.
                    with self.lock:
                        pause = self.vault.fill_vectors(FILL_BATCH) or 10.0
            except LockHeld:
                pause = 0.5  # another process is writing: try again shortly
            except Exception as exc:  # keep serving BM25 and whatever vectors exist
                import sys

                print(f"mdmem serve: embedding failed: {exc}", file=sys.stderr)
            if self.stopping.wait(pause):
                return
