"""Benchmark: the reference selection fold against the floor of a bare loop over the log.

Not a test: prints events/s and the ratio to the floor, for 100k and 1M events, in the
worst case (no non-empty message, so every event is read and every text delta gathered)
and the typical case of a finished child (its log ends with its answer, which the batch
path finds by reading backwards). Target: ratio <= 2.0, linear growth.

    python benchmarks/selection_fold.py [--events 1000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from reference_impl.selection import AssistantOutputFold

Event = dict[str, Any]


def make_log(n: int, *, final_message: bool) -> list[Event]:
    """A chunk-events log of ``n`` events: steps of text deltas and tool calls, each closed
    by an assistant message; every message is the empty usage-only kind unless ``final_message``."""
    events: list[Event] = []
    seq = 0
    while len(events) < n:
        step: list[dict[str, Any]] = [{"type": "block-start", "index": 0, "blockType": "text"}]
        step += [{"type": "text-delta", "index": 0, "text": f"w{k} "} for k in range(20)]
        step += [
            {"type": "block-end", "index": 0, "block": {"type": "text", "text": "…"}},
            {"type": "tool-call-delta", "index": 1, "id": "c", "name": "read", "argumentsDelta": "{}"},
            {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}},
            {"type": "finish", "reason": {"kind": "max-tokens"}},
        ]
        for chunk in step:
            seq += 1
            events.append(
                {"type": "assistant/chunk", "seq": seq, "time": seq, "data": {"turn": 1, "step": 1, "chunk": chunk}}
            )
        seq += 1
        events.append(
            {
                "type": "assistant/message",
                "seq": seq,
                "time": seq,
                "data": {"turn": 1, "step": 1, "message": {"role": "assistant", "content": []}},
            }
        )
    del events[n:]
    if final_message:
        events[-1] = {
            "type": "assistant/message",
            "seq": seq,
            "time": seq,
            "data": {"message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}},
        }
    return events


def floor(events: list[Event]) -> None:
    for event in events:
        event["type"]


def fold_each(events: list[Event]) -> None:
    fold = AssistantOutputFold("chunk-events")
    for event in events:
        fold.push(event)
    fold.collect()


def fold_batch(events: list[Event]) -> None:
    fold = AssistantOutputFold("chunk-events")
    fold.push_many(events)
    fold.collect()


def fastest(funcs: list[Callable[[list[Event]], None]], events: list[Event], repeat: int) -> list[float]:
    """The fastest of ``repeat`` runs of each function, interleaved so that drift in the
    machine's speed touches all of them alike, with the collector off."""
    times: list[list[float]] = [[] for _ in funcs]
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for func, spent in zip(funcs, times, strict=True):
                start = time.perf_counter()
                func(events)
                spent.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return [min(spent) for spent in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'case':<34}{'events':>10}{'floor ev/s':>14}{'fold ev/s':>14}{'ratio':>8}")
    results: dict[tuple[str, int], float] = {}
    folds = (("push_many (batch)", fold_batch), ("push (one event at a time)", fold_each))
    for final in (False, True):
        for n in (args.events // 10, args.events):
            events = make_log(n, final_message=final)
            base, *took = fastest([floor] + [func for _, func in folds], events, args.repeat)
            for (name, _), spent in zip(folds, took, strict=True):
                case = f"{name}, {'typical' if final else 'worst'}"
                results[(case, n)] = spent
                print(f"{case:<34}{n:>10}{n / base:>14,.0f}{n / spent:>14,.0f}{spent / base:>8.2f}")
    print("growth from 100k to 1M events (10.0 is linear):")
    for case in sorted({c for c, _ in results}):
        print(f"  {case:<34}{results[(case, args.events)] / results[(case, args.events // 10)]:>6.1f}x")


if __name__ == "__main__":
    main()
