"""`compliance-bake check`: one decision."""

from __future__ import annotations

from pathlib import Path

import click

from compliance_bake.cli.options import (
    TargetArgs,
    fixtures_option,
    json_option,
    target_options,
)
from compliance_bake.cli.shared import exit_codes


@click.command(
    epilog=exit_codes(0, 2, 3, 4, two="bad usage or bad input (option, fixture, profile)"),
    short_help="One decision: may a partner take a wager in a state?",
)
@click.option("--partner", required=True, help="Partner node id, e.g. node-bay-01.")
@click.option("--state", required=True, help="Two-letter US state code, e.g. MA.")
@click.option("--wager-type", required=True, help="Wager type, e.g. basketball.totals.")
@fixtures_option
@target_options("--target (each request)")
@json_option
def check(
    partner: str,
    state: str,
    wager_type: str,
    fixtures_dir: str | Path,
    target: TargetArgs,
    as_json: bool,
) -> None:
    """Ask for one decision: may PARTNER take a WAGER-TYPE wager in STATE?

    Answers allowed (status 200) or blocked (status 403, with the reason). A blocked decision is
    an answer, not a failure: the exit code is 0 either way. Asks the in-process engine over
    the fixtures, or with --target URL the live service (GET /api/compliance/check, or as
    --target-profile FILE says); the answer names which one answered. A target that fails
    exits 3; a bad profile exits 2 before any request. --explain prints the request, the raw
    answer and each profile field's value to stderr: the way to write a profile. A partner
    that is not in the fixtures gets a note on stderr (and "knownPartner": false under --json).

    \b
    Examples:
      compliance-bake check --partner node-bay-01 --state MA \\
        --wager-type basketball.totals
      compliance-bake check --json --partner node-offshore-04 --state NJ \\
        --wager-type soccer.moneyline
      COMPLIANCE_AGENT_KEY=... compliance-bake check \\
        --target http://127.0.0.1:8000 \\
        --partner node-bay-01 --state MA --wager-type basketball.totals
      compliance-bake check --target http://127.0.0.1:3000 \\
        --target-profile bun-service.toml --explain \\
        --partner node-bay-01 --state MA --wager-type basketball.totals
    """
    from compliance_bake.cli import render
    from compliance_bake.errors import InputError
    from compliance_bake.inputs.registry_source import read_registry
    from compliance_bake.inputs.zipindex import zip_index
    from compliance_bake.report.escape import terminal_json
    from compliance_bake.targets.engine import Engine
    from compliance_bake.targets.inprocess import InProcessTarget

    code = state.strip().upper()
    if code not in zip_index().jurisdictions:
        raise InputError(
            f"--state: unknown state {state!r}", "use a two-letter US state code such as MA"
        )
    policy = read_registry(fixtures_dir).policy
    known = policy.licences.partner(partner) is not None
    asked = target.http_target(concurrency=1)
    if asked is None:
        asked = InProcessTarget(Engine(policy))
    try:
        asked.wager_types_missing([wager_type])  # exit 2 before any request
        question = asked.question(partner, code, wager_type)
        decision = asked.check(partner, code, wager_type)
    finally:
        asked.close()
    if as_json:
        answer = {"partner": partner, "state": code, "wagerType": wager_type, **decision.as_json()}
        answer = {**answer, "target": asked.base, "knownPartner": known, "question": question}
        click.echo(terminal_json(answer))
    else:
        render.decision_line(partner, code, wager_type, decision, asked.base, known, question)
