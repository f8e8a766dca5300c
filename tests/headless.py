"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
load a page, run JavaScript in it, click, take a screenshot. No websocket library and no
Playwright: the protocol is JSON messages separated by NUL bytes on file descriptors 3 and 4.

Used by the graph page's tests and by ``benchmarks/graph_page.py`` (its screenshots).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, or a page's script threw."""


class Browser:
    """One headless Chromium with one page; ``with Browser() as b: b.open(url); b.eval("1+1")``."""

    def __init__(self, width: int = 1280, height: int = 800) -> None:
        if CHROMIUM is None:
            raise BrowserError("no chromium on PATH")
        self.width, self.height = width, height
        self._tmp = tempfile.TemporaryDirectory(prefix="mdmem-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # The child reads commands on fd 3 and writes answers on fd 4: move our ends above 9 first,
        # so that putting one on 3 or 4 in the child cannot overwrite the other.
        high_r, high_w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)
        to_child_r, from_child_w = high_r, high_w
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                "--mute-audio",
                f"--user-data-dir={self._tmp.name}",
                "--remote-debugging-pipe",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": self._tmp.name},
            preexec_fn=lambda: (os.dup2(to_child_r, 3), os.dup2(from_child_w, 4)),
        )  # noqa: PLW1509
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self.errors: list[str] = []  # uncaught exceptions in the page
        self._next = 0
        self.session = ""
        target = self.call("Target.createTarget", url="about:blank", session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True, session=False)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.call("Browser.close", session=False, timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._tmp.cleanup()

    def call(self, method: str, *, session: bool = True, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """Send one protocol command and wait for its answer (events on the way are dropped)."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise BrowserError(f"{method}: no answer within {timeout} s")
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise BrowserError(f"{method}: chromium closed the pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("method") == "Runtime.exceptionThrown":
                details = answer["params"]["exceptionDetails"]
                self.errors.append(details.get("exception", {}).get("description") or details.get("text", ""))
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})  # type: ignore[no-any-return]

    def open(self, url: str, *, ready: str = "true", timeout: float = 60) -> None:
        """Navigate and wait until the JavaScript expression ``ready`` is true."""
        self.call("Page.navigate", url=url)
        self.wait(f"document.readyState === 'complete' && ({ready})", timeout)

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable; promises awaited)."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise BrowserError(
                res["exceptionDetails"].get("exception", {}).get("description") or res["exceptionDetails"].get("text")
            )
        return res["result"].get("value")

    def wait(self, condition: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.eval(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"not true within {timeout} s: {condition}; page errors: {self.errors}")
            time.sleep(0.05)

    def click(self, x: float, y: float, count: int = 1) -> None:
        """A real mouse click (press and release) at viewport coordinates."""
        for i in range(1, count + 1):
            for kind in ("mousePressed", "mouseReleased"):
                self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=i)

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
