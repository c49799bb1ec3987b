"""What ``check-spec`` checks beyond loading: the spec's golden vectors against the suite's own
oracles, their byte counts and schemas, unique names, and the fixture files built on the spec
(scenario scripts, real-products cases). Each problem is ``file:line: field: message``; a
vector that does not fit its schema is not also compared with an oracle (the schema problem is
the cause), and a repeated name names the line of its first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conformance.spec import Problem, Spec, SpecError, expand_text, schema_validator
from conformance.spec.resources import fixtures_dir
from conformance.spec.schema_errors import SCHEMA_URN
from conformance.spec.yamlpos import Located, format_path, load_located

Json = Any
Check = Callable[[Spec, "_Rows"], Iterator[Problem]]


class _Rows:
    """The rows of one table with a way to place each field on its line."""

    def __init__(self, spec: Spec, fixtures: Path | None, loaded: Spec | None = None) -> None:
        self.spec = spec  # the contract the checks read: as loaded, or at a shipped product version
        self.loaded = loaded or spec  # as loaded: where each row is written
        self.fixtures = fixtures
        self._located: dict[str, Located] = {}

    def _path(self, area: str, table: str, index: int, row: dict[str, Any]) -> tuple[Any, ...]:
        """Where a row of the checked contract is written: in its table, or in the version entry
        that adds it (a row a version's cells changed: the table itself)."""
        written = self.loaded.table(area, table).rows
        if self.spec is self.loaded:
            return ("tables", table, "rows", index)
        if row in written:
            return ("tables", table, "rows", written.index(row))
        for v, entry in enumerate(self.loaded.areas[area].versions):
            if row in entry.rows.get(table, ()):
                return ("versions", v, "rows", table, entry.rows[table].index(row))
        return ("tables", table)

    def of(self, area: str, table: str) -> Iterator[tuple[dict[str, Any], Callable[[str, str], Problem]]]:
        file = self.spec.areas[area].file
        if file not in self._located:
            self._located[file] = load_located(self.spec.root / file)
        located = self._located[file]
        for index, row in enumerate(self.spec.table(area, table).rows):
            path = self._path(area, table, index, row)

            def problem(field: str, message: str, path: tuple[Any, ...] = path) -> Problem:
                where = (*path, field) if field else path
                return Problem(file, located.line_of(where), format_path(where), message)

            yield row, problem


def _fits(spec: Spec, definition: str, value: Json) -> str | None:
    """The first schema complaint about ``value`` as operations.json's ``definition``, or None."""
    validator = schema_validator(spec.root, "operations").evolve(
        schema={"$ref": f"{SCHEMA_URN}operations#/$defs/{definition}"}
    )
    error = next(iter(validator.iter_errors(value)), None)
    return None if error is None else f"not a valid {definition}: {error.message}"


def _selection(spec: Spec, rows: _Rows) -> Iterator[Problem]:
    from conformance.areas.selection.oracle import oracle_values

    for row, problem in rows.of("selection", "golden_vectors"):
        steps = {"binding": row["binding"], "steps": row["steps"]}
        wrong = _fits(spec, "fold_output_input", steps) or _fits(spec, "select_output_output", row["expected"])
        if wrong:
            yield problem("steps", wrong)
            continue
        values = oracle_values(spec, row["binding"], row["steps"])
        final = values[-1] if values else None
        if final != row["expected"]:
            yield problem("expected", f"the selection oracle (SelectionOracle) gives {final!r} for these steps")


def _results(spec: Spec, rows: _Rows) -> Iterator[Problem]:
    from conformance.areas.diagnostic.oracle import bound
    from conformance.areas.results.strategies import expected_rendering, expected_settlement

    limit = bound(spec)
    for row, problem in rows.of("results", "settle_vectors"):
        wrong = _fits(spec, "settle_run_input", row["input"]) or _fits(spec, "settle_run_output", row["expected"])
        if wrong:
            yield problem("input", wrong)
        elif (oracle := expected_settlement(spec, row["input"], limit.expected)) != row["expected"]:
            yield problem("expected", f"expected_settlement gives {oracle!r}")
    for row, problem in rows.of("results", "render_vectors"):
        wrong = _fits(spec, "render_tool_result_input", row["result"])
        wrong = wrong or _fits(spec, "render_tool_result_output", row["expected"])
        if wrong:
            yield problem("result", wrong)
        elif (oracle := expected_rendering(spec, row["result"])) != row["expected"]:
            yield problem("expected", f"expected_rendering gives {oracle!r}")


def _diagnostic(spec: Spec, rows: _Rows) -> Iterator[Problem]:
    from conformance.areas.diagnostic.grammar import roots
    from conformance.areas.diagnostic.oracle import bound
    from conformance.areas.diagnostic.snapshots import rendered_text

    limit = bound(spec)
    for row, problem in rows.of("diagnostic", "bound_vectors"):
        given, expected = expand_text(row["input"]), expand_text(row["expected"])
        for field, text in (("input_bytes", given), ("expected_bytes", expected)):
            if len(text.encode()) != row[field]:
                yield problem(field, f"is {row[field]}, but the text is {len(text.encode())} UTF-8 bytes")
        if limit.expected(given) != expected:
            yield problem("expected", f"the bound ({limit.limit} bytes, marker {limit.marker!r}) gives another text")
    matchers = roots(spec)
    for row, problem in rows.of("diagnostic", "line_vectors"):
        label, facts, text = row["facts"]["product"], row["facts"], expand_text(row["expected"])
        if not matchers[(label, row["kind"])].matches(text):
            yield problem("expected", f"not a sentence of the {row['kind']} grammar of {label}")
            continue
        if "permission" in facts or row["kind"] == "permission-line":
            continue  # the permission line's own table is checked by its grammar
        if (oracle := rendered_text(spec, label, {"kind": row["kind"], "facts": facts})) != text:
            yield problem("expected", f"the failure_line_fields table renders {oracle!r}")
    for area, label in (("claude-code", "Claude Code"), ("codex", "Codex")):
        for row, problem in rows.of(area, "outcome_vectors"):
            diagnostic = row["expected"].get("diagnostic")
            if diagnostic is not None and not matchers[(label, "run-result")].matches(diagnostic):
                yield problem("expected", f"diagnostic {diagnostic!r} is not a sentence of the run-result grammar")


def _names(spec: Spec, rows: _Rows) -> Iterator[Problem]:
    for area in spec.areas.values():
        for name, table in area.tables.items():
            columns = {c.name for c in table.columns}
            if not {"name", "covers"} <= columns:
                continue
            first: dict[str, int] = {}
            for row, problem in rows.of(area.name, name):
                found = problem("name", "")
                if row["name"] in first:
                    yield problem("name", f"duplicate vector name {row['name']!r} (first at line {first[row['name']]})")
                first.setdefault(row["name"], found.line)


def _fixtures(spec: Spec, rows: _Rows) -> Iterator[Problem]:
    from conformance.process.scenarios import load_scenarios, scenario_file
    from conformance.products.recordings import cases_file, load_cases

    def moved(path: Path) -> Path:  # the same file under the folder check-spec was given
        return rows.fixtures / path.relative_to(fixtures_dir()) if rows.fixtures else path

    try:
        load_cases(spec, moved(cases_file()))
    except SpecError as exc:
        yield from exc.problems
    for product in ("claude-code", "codex"):
        try:
            load_scenarios(spec, moved(scenario_file(product)))
        except SpecError as exc:
            yield from exc.problems


def _release_facts(spec: Spec, rows: _Rows) -> Iterator[Problem]:
    """Table releases.facts (REL-001): a row per (product, kind, name), and a union it says is read
    one the gate compares (a read union it does not compare would be a rule nothing applies)."""
    from conformance.products.upgrade import READ_UNIONS

    first: dict[tuple[str, str, str], int] = {}
    for row, problem in rows.of("releases", "facts"):
        key = (str(row["product"]), str(row["kind"]), str(row["name"]))
        if key in first:
            yield problem("name", f"a second row for {key[0]} {key[1]} {key[2]!r} (first at line {first[key]})")
        first.setdefault(key, problem("name", "").line)
        if key[1] == "union" and row["read"] and key[2] not in READ_UNIONS[key[0]]:
            yield problem(
                "name",
                f"the gate compares no {key[0]} union {key[2]!r} (it reads {', '.join(READ_UNIONS[key[0]])}); "
                "a union it does not read is compared only with read: false",
            )


CHECKS: list[Check] = [_names, _selection, _results, _diagnostic, _fixtures, _release_facts]


def deep_problems(spec: Spec, fixtures: Path | None = None) -> list[Problem]:
    """Every problem of every check, each check's in file and line order; ``fixtures`` is the
    fixtures folder whose scenario scripts and cases are checked (default: the shipped one)."""
    rows = _Rows(spec, fixtures)
    problems: list[Problem] = []
    for check in CHECKS:
        problems.extend(sorted(check(spec, rows), key=lambda p: (p.file, p.line)))
    # Every shipped product version's contract too: the rows a version adds are checked as the
    # base's are, each placed on the line of its version entry (a problem found twice is one).
    for area in spec.areas.values():
        for version in area.shipped[1:]:
            at = spec.at({area.name: version})
            for check in CHECKS:
                if check is not _fixtures:
                    found = sorted(check(at, _Rows(at, fixtures, spec)), key=lambda p: (p.file, p.line))
                    problems += [p for p in found if p not in problems]
    return problems
