"""A subagent-conformance adapter for your harness: fill in each operation with a call into your
harness, then run the suite against it:

    python -m pytest --pyargs conformance --impl=adapter

Each operation takes one JSON value and returns one (spec/schema/operations.json of the suite
names each shape, <operation>_input and <operation>_output; the rules are in the contract,
docs/contract.md). An operation left as it is answers NotImplementedError, which the suite
reports as that operation's failure. Claim only what your harness does: the suite tests what
CONFORMANCE claims and reports the rest as not applicable.
"""

from __future__ import annotations

from typing import Any

JSON = Any  # a JSON value, as the schema of each operation's input or output shapes it

CONFORMANCE: dict[str, Any] = {
    "protocol": "1",
    # The selection bindings your harness reads: chunk-events, embedded-stream, text-stream.
    "bindings": ["chunk-events", "embedded-stream", "text-stream"],
    # The products you drive, each at the package version the suite ships, e.g. {"codex": "0.147.0"}.
    "providers": {},
    # The providers whose managed process (run_claude_code / run_codex) you drive too.
    "process_drivers": [],
    # Optional: "settlements" (the settle_run paths you take), "background" (job, notice),
    # "operations" (exactly the operations you implement) and "implementation" ({name, version}).
}


# {stubs}
