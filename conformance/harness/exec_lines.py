"""The exec protocol's lines: one JSON value a line, each way, over the adapter's pipes.

Kept apart from the adapter process's lifecycle (exec_adapter) because this is where a call's
time goes: stdout is read in the calling thread within response_line_max, a request is written
without ever stalling on a full pipe, and a line is parsed exactly as ``json.loads`` would,
only faster.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import orjson

EOF = object()  # what ResponseLines gives after the adapter's last line


@dataclass(frozen=True)
class Overlong:
    """A response line longer than response_line_max: only its start was kept."""

    start: bytes


class Cut(bytes):
    """The last bytes on stdout before it closed, with no newline after them: half a line,
    perhaps, which still counts as a line if it reads as one (a last response unterminated)."""


class ResponseLines:
    """The adapter's stdout, read in the calling thread: no reader thread to hand each line
    over (that hop was a third of the suite side of a call). Whole lines come out of
    ``take``; a line longer than ``limit`` comes out as an Overlong and the rest of it is
    dropped unread into memory; after the last line, EOF."""

    def __init__(self, fd: int, limit: int, kept: int) -> None:
        self.fd, self.limit, self.kept = fd, limit, kept
        self.poll = select.poll()  # not select.select: a run may hold descriptors past FD_SETSIZE
        self.poll.register(fd, select.POLLIN)
        self.buffer = bytearray()
        self.ready: list[object] = []  # lines, an Overlong or EOF, in the order they came
        self.skipping = False  # inside an overlong line, up to its newline
        self.ended = False

    def pump(self, wait: float) -> bool:
        """Read what stdout has within ``wait`` seconds; False when nothing came."""
        if self.ended or not self.poll.poll(wait * 1000):
            return False
        self.feed(os.read(self.fd, 65536))
        return True

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            self.ended = True
            if self.buffer and not self.skipping:  # a last line without its newline still counts
                self.ready.append(Cut(self.buffer))
            self.buffer.clear()
            self.ready.append(EOF)
            return
        searched = len(self.buffer)  # the bytes before the chunk hold no newline
        self.buffer += chunk
        while True:
            end = self.buffer.find(b"\n", searched)
            searched = 0
            if self.skipping:
                if end < 0:
                    self.buffer.clear()
                    return
                del self.buffer[: end + 1]
                self.skipping = False
                continue
            if 0 <= end < self.limit:  # the line, newline included, is at most limit bytes
                self.ready.append(bytes(self.buffer[: end + 1]))
                del self.buffer[: end + 1]
                continue
            if end < 0 and len(self.buffer) < self.limit:
                return  # a line still coming
            self.ready.append(Overlong(bytes(self.buffer[: self.kept])))
            self.skipping = True

    def take(self) -> object:
        """The next line read already, or None."""
        return self.ready.pop(0) if self.ready else None


def request_line(request: Any) -> bytes:
    """The request as one JSON line in UTF-8: by orjson, or by json where orjson cannot write it."""
    try:  # orjson writes the same JSON (compact, UTF-8) about 15 times faster than json
        return orjson.dumps(request) + b"\n"
    except TypeError:  # orjson.JSONEncodeError: e.g. an integer beyond 64 bits, which json writes
        return (json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8")


def write_request(popen: subprocess.Popen[bytes], lines: ResponseLines, line: bytes, deadline: float) -> None:
    """Write the request line; while the pipe is full, read stdout meanwhile, so that an
    adapter writing while the suite writes cannot stall both, up to the deadline. A hang or
    an end is left for the read to report."""
    assert popen.stdin is not None
    stdin = popen.stdin.fileno()  # not blocking (set when the adapter starts)
    rest = memoryview(line)
    waiting = select.poll()  # one wait for both: stdin writable again, or stdout to read
    waiting.register(stdin, select.POLLOUT)
    if not lines.ended:
        waiting.register(lines.fd, select.POLLIN)
    while rest:
        try:
            rest = rest[os.write(stdin, rest) :]
            continue
        except BlockingIOError:
            pass  # the pipe is full
        except OSError:
            return  # the adapter closed its stdin or ended
        while True:
            if time.monotonic() >= deadline or popen.poll() is not None:
                return
            ready = {fd for fd, _ in waiting.poll(10)}
            if stdin in ready:
                break
            if lines.fd in ready:
                lines.pump(0)
                if lines.ended:  # stdout closed: no more to read, only the write to wait for
                    waiting.unregister(lines.fd)


# A run of 19 digits may be an integer beyond 64 bits, which orjson reads as a float. A line
# with every ASCII digit made "0" and every other byte " " has one if it holds 19 zeros in a
# row: ten times faster than the regular expression \d{19}.
_DIGITS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_LONG_RUN = b"0" * 19


def parse_line(line: bytes) -> Any:
    """``json.loads(line)``, exactly: orjson reads the line (several times faster) unless it
    could read it differently (a long run of digits) or refuses it; json decides then."""
    if _LONG_RUN not in line.translate(_DIGITS):
        with contextlib.suppress(orjson.JSONDecodeError):
            return orjson.loads(line)
    return json.loads(line)


ONLY_JSON_LINES = "stdout carries only JSON lines, one exec response each; write logs and banners to stderr"


def refusal(answer: bytes, request_id: int, op: str, asked: dict[int, str]) -> tuple[str | None, str, Any]:
    """Why a response line cannot be the answer to ``request_id`` (None if it can), in words
    the same for every call refused so; what differs from call to call (ids, bytes), as lines
    of detail; and its message. ``asked``: the operation of each id sent to the process."""
    try:
        message = parse_line(answer)
    except RecursionError:  # the suite's own parser gave up: the line may be JSON, it is not the adapter raising
        return (
            (
                f"nested too deep to read (beyond Python's recursion limit, {sys.getrecursionlimit()}, "
                "the depth of JSON the suite parses)"
            ),
            "",
            None,
        )
    except UnicodeDecodeError as exc:  # before ValueError, which it is: the bytes, not the JSON
        where = f"\n  its first bad byte: 0x{answer[exc.start]:02x} at offset {exc.start}"
        return "not UTF-8 (exec lines are UTF-8)", where, None
    except json.JSONDecodeError:
        return f"not JSON ({ONLY_JSON_LINES})", "", None
    except ValueError:  # valid JSON, but an integer longer than int() reads from text
        return (
            (
                f"an integer of more than {sys.get_int_max_str_digits()} digits (Python's integer-string "
                "limit, beyond which the suite cannot read a number)"
            ),
            "",
            None,
        )
    if not isinstance(message, dict):
        return f"not a JSON object ({ONLY_JSON_LINES})", "", None
    got = message.get("id")
    if got != request_id or isinstance(got, bool):
        if isinstance(got, int) and not isinstance(got, bool) and got in asked and got < request_id:
            said = f"\n  duplicate answer to id {got} (the {asked[got]} request, answered already); "
            return (
                "a second answer to an earlier request",
                f"{said}expected the answer to id {request_id} ({op})",
                message,
            )
        return "wrong id (not the request's)", f"\n  wrong id {got!r}, expected {request_id}", message
    if ("output" in message) == ("error" in message):
        return "an exec response has exactly one of output and error", "", message
    return None, "", message


def answered_again(lines: ResponseLines, request_id: int, deadline: float) -> bool:
    """Whether a second line carrying ``request_id`` came with its answer (read already, or
    waiting in the pipe): a duplicate answer, the fault of the call it answers twice. A line
    begun already is read to its end (within the call's deadline): a write of more than PIPE_BUF
    bytes reaches the reader in parts, and a busy machine may run the reader between them, so
    what came in one write must not depend on the scheduler."""
    lines.pump(0)
    while not lines.ready and lines.buffer and not lines.skipping and (left := deadline - time.monotonic()) > 0:
        lines.pump(min(left, 0.1))
    extra = lines.ready[0] if lines.ready else None
    if not isinstance(extra, bytes):
        return False
    try:
        again = parse_line(extra)
    except (ValueError, RecursionError):
        return False
    return isinstance(again, dict) and again.get("id") == request_id and not isinstance(again.get("id"), bool)
