"""Team mode's guarded writes into one collection: how many a second, none lost, none refused
falsely, and a true duplicate still refused.

At the run's highest N, every client loops only the guarded create of a new record (resolve_record
-> prepare_write -> commit_write) into the one seeded collection, so each commit contends for that
collection's names counter with every other client's. The reference, measured in the same run by
the same clients: three no-op calls (get_server_instructions) per iteration, what the transport,
authentication and sessions alone allow.

Checked against the database afterwards:
- lost writes: commits reported committed whose record is not stored exactly once;
- false stale refusals: STALE_REVIEW for a title unlike every other one (the workload writes no
  name any review could match, so every such refusal is false);
- true duplicates: while the load runs, pairs of extra clients each resolve and prepare the same
  new title, then commit at the same moment; exactly one may be stored, the other refused.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from anchor_site.devtools.benchmarks import http_load
from anchor_site.devtools.benchmarks.http_load import (
    AREA,
    NOOP,
    Client,
    Load,
    Seeded,
    guarded_create,
    new_title,
)
from anchor_site.devtools.benchmarks.measure import Row

WRITES_TARGET = 30.0  # guarded writes/s into one collection (issue: 25 clients, PostgreSQL)
DUPLICATE_PAIRS = 3


async def write_step(client: Client, load: Load, seeded: Seeded, tag: str, index: int) -> None:
    await guarded_create(client, load, seeded, tag)


async def noop_step(client: Client, load: Load, seeded: Seeded, tag: str, index: int) -> None:
    for _ in range(3):
        await client.call(load, NOOP, {})


@dataclass
class Duplicates:
    """The deliberate duplicate pairs: each pair's outcomes and the title they both wrote."""

    outcomes: list[tuple[str, list[str]]] = field(default_factory=list)  # (title, statuses)


async def _envelope(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.request("tools/call", {"name": name, "arguments": arguments})
    found: dict[str, Any] = result.get("structuredContent") or json.loads(
        result["content"][0]["text"]
    )
    return found


async def _prepared(client: Client, seeded: Seeded, title: str) -> str | None:
    review = await _envelope(
        client, "resolve_record", {"query": title, "collection_id": seeded.collection_id}
    )
    if not review.get("ok") or review["result"]["status"] != "no_match":
        return None
    prepared = await _envelope(
        client,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": seeded.collection_id, "title": title, "data": {}},
            "review_ids": [review["result"]["resolution_id"]],
            "decision_reason": "benchmark: a deliberate duplicate",
        },
    )
    return prepared["result"]["action_id"] if prepared.get("ok") else None


def _status(envelope: dict[str, Any]) -> str:
    if envelope.get("ok"):
        return str(envelope["result"].get("status"))
    return str((envelope.get("error") or {}).get("code", "?"))


async def duplicate_pairs(url: str, seeded: Seeded, pairs: int, found: Duplicates) -> None:
    """Pairs of clients that both find one new title new, then commit it at the same moment."""
    import httpx

    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as http:
        clients = [Client(http, url, seeded.tokens[i % len(seeded.tokens)]) for i in range(2)]
        await asyncio.gather(*(client.open() for client in clients))
        for _ in range(pairs):
            await asyncio.sleep(0.5)  # into the load, not before it
            title = new_title()
            actions = await asyncio.gather(*(_prepared(c, seeded, title) for c in clients))
            if None in actions:
                found.outcomes.append((title, ["not prepared"]))
                continue
            commits = await asyncio.gather(
                *(
                    _envelope(client, "commit_write", {"action_id": action_id})
                    for client, action_id in zip(clients, actions, strict=True)
                )
            )
            found.outcomes.append((title, sorted(_status(e) for e in commits)))
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)


@dataclass(frozen=True)
class Stored:
    """What the database holds of the titles the run wrote."""

    lost: int  # committed, but not stored exactly once
    duplicates_refused: int  # pairs with one commit stored and the other refused STALE_REVIEW


def check_stored(seeded: Seeded, load: Load, duplicates: Duplicates) -> Stored:
    from django.db import connection

    from records.models import Record

    titles = [title for title, _ in duplicates.outcomes] + load.committed_titles
    stored = Counter(
        Record.objects.filter(collection_id=seeded.collection_id, title__in=titles).values_list(
            "title", flat=True
        )
    )
    connection.close()
    lost = sum(1 for title in load.committed_titles if stored[title] != 1)
    refused = sum(
        1
        for title, statuses in duplicates.outcomes
        if statuses == ["STALE_REVIEW", "committed"] and stored[title] == 1
    )
    return Stored(lost, refused)


def measure(url: str, seeded: Seeded, clients: int, seconds: float) -> list[Row]:
    """The writes row (and the commit's own latency beneath it) at `clients` clients."""
    noop = asyncio.run(http_load.drive(url, seeded, clients, seconds, step=noop_step))
    duplicates = Duplicates()
    load = asyncio.run(
        http_load.drive(
            url,
            seeded,
            clients,
            seconds,
            step=write_step,
            beside=lambda: duplicate_pairs(url, seeded, DUPLICATE_PAIRS, duplicates),
        )
    )
    stored = check_stored(seeded, load, duplicates)
    writes = len(load.committed_titles) / load.seconds if load.seconds else 0.0
    floor = len(noop.samples.get(NOOP, [])) / 3 / noop.seconds if noop.seconds else None
    false_stale = sum(n for what, n in load.errors.items() if what.endswith("STALE_REVIEW"))
    other_errors = sum(load.errors.values()) - false_stale
    pairs = len(duplicates.outcomes)
    passed = (
        writes >= WRITES_TARGET
        and stored.lost == 0
        and false_stale == 0
        and other_errors == 0
        and stored.duplicates_refused == pairs == DUPLICATE_PAIRS
    )
    commits = load.samples.get("commit_write", [])
    shown = "; ".join(f"{title[:6]}…: {', '.join(s)}" for title, s in duplicates.outcomes)
    return [
        Row(
            AREA,
            f"guarded writes into one collection, {clients} clients (resolve, prepare, commit)",
            writes,
            "/s",
            target=f">= {WRITES_TARGET:g} /s, 0 lost, 0 false stale, duplicates refused",
            passed=passed,
            reference=floor,
            reference_what="three no-op calls an iteration, same clients, same run",
            note=(
                f"{len(load.committed_titles):,} commits in {load.seconds:.1f} s; lost writes "
                f"{stored.lost}; false stale refusals {false_stale}; true duplicates refused "
                f"{stored.duplicates_refused} of {pairs} concurrent pairs ({shown}); "
                f"{http_load.errors_text(load)}; load average {load.load_average}"
            ),
        ),
        Row(
            AREA,
            f"  commit_write, writes only, {clients} clients",
            http_load.median_ms(commits),
            "ms",
            p95=http_load.p95_ms(commits),
            note=f"{len(commits):,} calls",
        ),
    ]
