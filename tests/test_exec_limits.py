"""The exec protocol's limits and lines, row by row (tables exec_limits and exec_lines of
spec/adapter-protocol.yaml), and each --impl form of table impl_forms.

A deadline is checked at a shortened value, so that a test does not wait its whole length: the
value the suite uses is the row's (checked first), and the shortened copy proves that the limit is
the one applied where the row says."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.exec_adapter import ExecAdapter, ExecFailure, ExecStartError
from conformance.harness.exec_texts import Limits
from conformance.spec import load_spec, operations_schema
from conformance.verdict.reach import row_params
from tests.conftest import RunSuite

SPEC = load_spec()
LIMITS = {row["name"]: row for row in SPEC.table("adapter-protocol", "exec_limits").rows}
MUTE = "import sys, time\nfor line in sys.stdin:\n    time.sleep(3600)\n"  # reads requests, never answers
DESCRIBES_THEN_MUTE = (
    "import json, sys, time\nimport reference_impl\nfor line in sys.stdin:\n    r = json.loads(line)\n"
    "    if r['op'] == 'describe':\n"
    "        print(json.dumps({'id': r['id'], 'output': reference_impl.CONFORMANCE}), flush=True)\n"
    "    else:\n        time.sleep(3600)\n"
)
DEAF = "import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nsys.stdin.close()\ntime.sleep(3600)\n"


def _limits(**shortened: Any) -> Limits:
    return dataclasses.replace(Limits.from_spec(SPEC), **shortened)


def _command(tmp_path: Path, source: str) -> str:
    script = tmp_path / "adapter.py"
    script.write_text(source, encoding="utf-8")
    return f"{sys.executable} {script}"


def _failed_call(tmp_path: Path, source: str, limits: Limits, op: str, payload: Any) -> tuple[ExecFailure, float]:
    """The failure of one call after describe, and the seconds it took; the adapter is closed
    even when the call does not fail."""
    adapter = ExecAdapter(_command(tmp_path, source), SPEC, limits)
    try:
        adapter.describe()
        started = time.monotonic()
        with pytest.raises(ExecFailure) as caught:
            adapter.call(op, payload)
        return caught.value, time.monotonic() - started
    finally:
        adapter.close()


def _row(name: str) -> list[Any]:
    return row_params(SPEC, "adapter-protocol", "exec_limits", where=lambda r: r["name"] == name)


@pytest.mark.requirement("ADP-017", "ADP-018")
@pytest.mark.parametrize("row", _row("describe_timeout"))
def test_a_silent_adapter_is_given_up_after_describe_timeout(tmp_path: Path, row: dict[str, Any]) -> None:
    assert Limits.from_spec(SPEC).describe_timeout == row["value"]
    adapter = ExecAdapter(_command(tmp_path, MUTE), SPEC, _limits(describe_timeout=0.5))
    started = time.monotonic()
    with pytest.raises(ExecStartError) as caught:
        adapter.describe()
    adapter.close()
    assert time.monotonic() - started < row["value"], "the describe deadline was not applied"
    assert "did not describe itself" in str(caught.value) and "no answer within 0.5 s" in str(caught.value)
    assert "quote the whole command" not in str(caught.value)  # a script that hangs is not an unquoted command


@pytest.mark.requirement("ADP-017", "ADP-018")
def test_a_bare_interpreter_that_hangs_at_describe_is_told_to_quote_the_command() -> None:
    """An unquoted --impl=exec:python adapter.py reaches the suite as exec:python alone, which
    reads its program from stdin and never answers: the message says to quote the command."""
    adapter = ExecAdapter(sys.executable, SPEC, _limits(describe_timeout=0.5))
    with pytest.raises(ExecStartError) as caught:
        adapter.describe()
    adapter.close()
    message = str(caught.value)
    assert "no answer within 0.5 s" in message, message
    assert f'quote the whole command, e.g. --impl="exec:{sys.executable} adapter.js"' in message, message


@pytest.mark.requirement("ADP-018")
@pytest.mark.parametrize("row", _row("process_call_timeout"))
def test_a_process_operation_gets_process_call_timeout(tmp_path: Path, row: dict[str, Any]) -> None:
    assert Limits.from_spec(SPEC).process_call_timeout == row["value"]
    limits = _limits(process_call_timeout=0.5)
    failure, _ = _failed_call(tmp_path, DESCRIBES_THEN_MUTE, limits, "run_codex", {"runs": []})
    assert "run_codex: no answer within 0.5 s" in str(failure) and failure.requirements == ("ADP-018",)


DESCRIBES_THEN_DEAF = (
    "import json, sys, time\nimport reference_impl\nr = json.loads(sys.stdin.readline())\n"
    "print(json.dumps({'id': r['id'], 'output': reference_impl.CONFORMANCE}), flush=True)\ntime.sleep(3600)\n"
)  # describes, then reads nothing more: a request larger than the pipe never goes in whole
DESCRIBES_THEN_CHATTERS = (
    "import json, sys\nimport reference_impl\nr = json.loads(sys.stdin.readline())\n"
    "print(json.dumps({'id': r['id'], 'output': reference_impl.CONFORMANCE}), flush=True)\n"
    "sys.stdout.write('{}\\n' * 200000)\nsys.stdout.flush()\nfor line in sys.stdin:\n    pass\n"
)  # writes 400 KB of lines nobody asked for before it reads the next request


@pytest.mark.requirement("ADP-018")
@pytest.mark.parametrize("row", _row("pure_call_timeout"))
def test_a_request_the_adapter_never_reads_is_given_up_at_the_deadline(tmp_path: Path, row: dict[str, Any]) -> None:
    """The deadline covers writing the request too, not only waiting for the answer."""
    assert Limits.from_spec(SPEC).pure_call_timeout == row["value"]
    limits = _limits(pure_call_timeout=0.5)
    failure, took = _failed_call(tmp_path, DESCRIBES_THEN_DEAF, limits, "bound_diagnostic", {"text": "x" * 1_000_000})
    assert took < row["value"], "the call's deadline was not applied to the write"
    assert "bound_diagnostic: no answer within 0.5 s" in str(failure) and failure.requirements == ("ADP-018",)


HANGS_AFTER_ITS_FIRST_START = (
    "import json, os, sys, time\nimport reference_impl\nstarts = os.environ['STARTS']\n"
    "first = not os.path.exists(starts)\nopen(starts, 'a').write('start\\n')\n"
    "for line in sys.stdin:\n    r = json.loads(line)\n    if r['op'] == 'describe' and first:\n"
    "        print(json.dumps({'id': r['id'], 'output': reference_impl.CONFORMANCE}), flush=True)\n"
    "    else:\n        time.sleep(3600)\n"
)  # describes itself once; every other request, and every later process, hangs


@pytest.mark.requirement("ADP-018", "ADP-019")
def test_a_restart_that_hangs_at_describe_is_not_restarted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hung adapter is killed and restarted once; when the fresh process hangs too (at its
    describe), later calls fail at once instead of each waiting out another describe_timeout."""
    starts = tmp_path / "starts"
    monkeypatch.setenv("STARTS", str(starts))
    adapter = ExecAdapter(_command(tmp_path, HANGS_AFTER_ITS_FIRST_START), SPEC, _limits(pure_call_timeout=0.3))
    try:
        adapter.describe()  # at the row's describe_timeout: a busy machine may start Python slowly
        adapter.limits = dataclasses.replace(adapter.limits, describe_timeout=0.3)  # only the restart's is waited out
        failures = []
        for op in ("bound_diagnostic", "bound_diagnostic", "bound_diagnostic"):
            with pytest.raises(ExecFailure) as caught:
                adapter.call(op, {"text": "x"})
            failures.append(caught.value)
    finally:
        adapter.close()
    # The restarted process may be killed at its 0.3 s deadline before it writes its line; that a
    # restart was asked to describe itself, and that no third one was, the messages below show.
    assert starts.read_text().splitlines() in (["start"], ["start", "start"]), "restarted after its restart hung"
    assert [f.requirements for f in failures] == [("ADP-018",)] * 3
    assert "bound_diagnostic: no answer within 0.3 s" in str(failures[0])
    assert "describe: no answer within 0.3 s" in str(failures[1]) and failures[1].hung is not None
    refused = (
        "bound_diagnostic: not sent: the adapter restarted for an earlier call hung at describe (no answer within 0.3"
    )
    assert str(failures[2]).startswith(refused), failures[2]


CLOSES_STDOUT_AFTER_ITS_FIRST_START = HANGS_AFTER_ITS_FIRST_START.replace(
    "        time.sleep(3600)", "        os.close(1)\n        time.sleep(3600)"
)  # describes itself once; then, and in every later process, closes its stdout and lives on


@pytest.mark.requirement("ADP-019")
def test_a_restart_that_closes_its_stdout_at_describe_keeps_adp_019_for_the_calls_not_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adapter that closed its stdout and lives on can never answer: like a hung restart it is
    not restarted again, and the calls not sent keep its rule, ADP-019, not a hang's ADP-018."""
    starts = tmp_path / "starts"
    monkeypatch.setenv("STARTS", str(starts))
    adapter = ExecAdapter(_command(tmp_path, CLOSES_STDOUT_AFTER_ITS_FIRST_START), SPEC, _limits())
    try:
        adapter.describe()
        failures = []
        for _ in range(3):
            with pytest.raises(ExecFailure) as caught:
                adapter.call("bound_diagnostic", {"text": "x"})
            failures.append(caught.value)
    finally:
        adapter.close()
    assert starts.read_text().splitlines() == ["start", "start"], "the adapter was restarted after its restart closed"
    assert [f.requirements for f in failures] == [("ADP-019",)] * 3
    assert all(f.hung is not None and f.stuck == "closed its stdout and kept running" for f in failures[:2])
    refused = "bound_diagnostic: not sent: the adapter restarted for an earlier call closed its stdout and kept running"
    assert str(failures[2]).startswith(f"{refused} at describe"), failures[2]


ANSWERS_ITS_FIRST_CALL_TWICE = (
    "import json, os, sys\nimport reference_impl\nopen(os.environ['STARTS'], 'a').write('start\\n')\n"
    "calls = 0\nfor line in sys.stdin:\n    r = json.loads(line)\n    if r['op'] == 'describe':\n"
    "        out = reference_impl.CONFORMANCE\n    else:\n        calls += 1\n"
    "        out = reference_impl.bound_diagnostic(r['input'])\n"
    "    answer = json.dumps({'id': r['id'], 'output': out}) + '\\n'\n"
    "    sys.stdout.write(answer * (2 if calls == 1 and r['op'] != 'describe' else 1)); sys.stdout.flush()\n"
)  # the first call's answer written twice, in one write


@pytest.mark.requirement("ADP-016")
def test_a_call_answered_twice_fails_and_the_same_process_serves_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second line is the answered call's fault: it fails that call and is dropped; the
    adapter, in step again, answers the next call without a restart."""
    starts = tmp_path / "starts"
    monkeypatch.setenv("STARTS", str(starts))
    adapter = ExecAdapter(_command(tmp_path, ANSWERS_ITS_FIRST_CALL_TWICE), SPEC, _limits())
    try:
        adapter.describe()
        with pytest.raises(ExecFailure) as caught:
            adapter.call("bound_diagnostic", {"text": "x"})
        answer = adapter.call("bound_diagnostic", {"text": "y"})
    finally:
        adapter.close()
    assert caught.value.requirements == ("ADP-016",) and "answered twice" in str(caught.value), caught.value
    assert answer is not None and starts.read_text().splitlines() == ["start"], "the adapter was restarted"


DESCRIBES_THEN_CLOSES_STDOUT = (
    "import json, os, sys, time\nimport reference_impl\nr = json.loads(sys.stdin.readline())\n"
    "print(json.dumps({'id': r['id'], 'output': reference_impl.CONFORMANCE}), flush=True)\n"
    "sys.stdin.readline()\nos.close(1)\ntime.sleep(3600)\n"
)  # answers describe, then closes its stdout at the next request and lives on


@pytest.mark.requirement("ADP-019")
def test_an_adapter_that_closes_its_stdout_and_lives_on_fails_the_call(tmp_path: Path) -> None:
    """Its stdout's end is not an exit to wait for: the call fails once exit_reap has passed."""
    limits = _limits(pure_call_timeout=0.5)
    failure, took = _failed_call(tmp_path, DESCRIBES_THEN_CLOSES_STDOUT, limits, "bound_diagnostic", {"text": "x"})
    assert took < 5, "the suite waited for an adapter that closed its stdout beyond the call's deadline"
    assert "bound_diagnostic: the adapter closed its stdout without answering" in str(failure), str(failure)
    assert failure.requirements == ("ADP-019",)


@pytest.mark.requirement("ADP-015", "ADP-016")
def test_an_adapter_writing_while_the_suite_writes_stalls_neither(tmp_path: Path) -> None:
    """Stdout is read while a large request is written, so that an adapter filling its stdout
    pipe before it reads stdin is refused for its stray line instead of both waiting forever."""
    limits = _limits(pure_call_timeout=20)
    big = {"text": "x" * 1_000_000}
    failure, took = _failed_call(tmp_path, DESCRIBES_THEN_CHATTERS, limits, "bound_diagnostic", big)
    assert took < 10, "the suite and the adapter waited on each other"
    assert "malformed response line: wrong id" in str(failure) and "the line: '{}'" in str(failure), str(failure)


@pytest.mark.requirement("ADP-020", "ADP-021")
@pytest.mark.parametrize("row", _row("shutdown_grace"))
def test_an_adapter_that_outstays_shutdown_grace_is_killed(tmp_path: Path, row: dict[str, Any]) -> None:
    assert Limits.from_spec(SPEC).shutdown_grace == row["value"]
    adapter = ExecAdapter(_command(tmp_path, DEAF), SPEC, _limits(shutdown_grace=0.3))
    process = adapter._start()
    started = time.monotonic()
    adapter.close()
    assert time.monotonic() - started < row["value"] and process.popen.poll() is not None


@pytest.mark.requirement("ADP-019")
@pytest.mark.parametrize("row", _row("stderr_tail"))
def test_a_crash_shows_at_most_stderr_tail_of_the_end_of_stderr(tmp_path: Path, row: dict[str, Any]) -> None:
    noisy = (
        "import sys\nsys.stderr.write('x' * 20000 + 'THE-END')\nsys.stderr.flush()\n"
        "for line in sys.stdin:\n    sys.exit(3)\n"
    )
    adapter = ExecAdapter(_command(tmp_path, noisy), SPEC, Limits.from_spec(SPEC))
    adapter._start()
    time.sleep(0.3)
    with pytest.raises(ExecFailure) as caught:
        adapter.call("bound_diagnostic", {"text": "x"})
    adapter.close()
    tail = str(caught.value).rsplit("end of its stderr:\n", 1)[1]
    assert tail.endswith("THE-END") and len(tail.encode("utf-8")) <= row["value"]


@pytest.mark.requirement("ADP-015", "ADP-016")
@pytest.mark.parametrize(
    "row",
    row_params(SPEC, "adapter-protocol", "exec_lines", marks=lambda r: [pytest.mark.requirement(*r["covers"])]),
)
def test_exec_line(row: dict[str, Any]) -> None:
    """Each example line is valid, or not, as its row says, against its message's schema."""
    try:
        value = json.loads(row["line"])
    except ValueError:
        valid = False
    else:
        valid = not list(operations_schema(SPEC.root, row["message"]).iter_errors(value))
    assert valid == row["valid"], f"{row['name']}: {row['line']} should be {'valid' if row['valid'] else 'invalid'}"


ATTRIBUTE_ADAPTER = (
    "import types\nimport reference_impl\n"
    "names = [k for k in dir(reference_impl) if not k.startswith('_')]\n"
    "adapter = types.SimpleNamespace(**{k: getattr(reference_impl, k) for k in names})\n"
)
EXEC_ADAPTER = (
    "import json, sys\nimport reference_impl\nfor line in sys.stdin:\n    r = json.loads(line)\n"
    "    out = reference_impl.CONFORMANCE if r['op'] == 'describe' else getattr(reference_impl, r['op'])(r['input'])\n"
    "    print(json.dumps({'id': r['id'], 'output': out}), flush=True)\n"
)


@pytest.mark.requirement("ADP-001", "ADP-002", "ADP-007")
@pytest.mark.parametrize("form", row_params(SPEC, "adapter-protocol", "impl_forms"))
def test_each_impl_form_loads_and_answers(tmp_path: Path, run_suite: RunSuite, form: dict[str, Any]) -> None:
    (tmp_path / "form_adapter.py").write_text(ATTRIBUTE_ADAPTER, encoding="utf-8")
    impl = {
        "module": "reference_impl",
        "attribute": "form_adapter:adapter",
        "exec": f"exec:{_command(tmp_path, EXEC_ADAPTER)}",
    }[form["form"]]
    sys.modules.pop("form_adapter", None)
    run = run_suite("-q", "--pyargs", "conformance.test_diagnostic", "-k", "bound_vector", impl=impl, report=True)
    sys.modules.pop("form_adapter", None)
    assert run.code == 0 and "passed" in run.out, run.tail
    assert run.report["adapter"]["impl"] == impl and run.report["adapter"]["declaration"]["protocol"] == "1"
