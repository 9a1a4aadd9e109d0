"""Options shared by several commands, as named decorators."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import click
from click.core import ParameterSource

from compliance_bake.targets.routes import DEFAULT_TIMEOUT

F = TypeVar("F", bound=Callable[..., Any])


def _as_one(name: str, make: Callable[..., Any], command: F, *options: Callable[[F], F]) -> F:
    """`options` on `command`, their values handed to it as one parameter `name`:
    make(**values), its parameters named as the options' values are (a bad value raises when
    the command runs: bad usage, exit 2). --help lists the options in the order given."""
    names = tuple(inspect.signature(make).parameters)

    @functools.wraps(command)
    def with_value(**params: Any) -> Any:
        given = {key: params.pop(key) for key in names}
        return command(**{name: make(**given)}, **params)

    grouped = cast(F, with_value)
    for option in reversed(options):  # click lists the decorator nearest the function first
        grouped = option(grouped)
    return grouped


def fixtures_option(command: F) -> F:
    """--registry SOURCE (alias --fixtures) and --registry-map FILE, on every command that
    reads the registry, handed to it as one `fixtures_dir`: the source (registry_source())."""
    return _as_one(
        "fixtures_dir",
        registry_source,
        command,
        click.option(
            "--registry",
            "--fixtures",
            "fixtures_dir",
            metavar="SOURCE",
            help="Where the registry is read: a fixtures folder with licences.json, geo.json "
            "and an optional limits.json, sqlite:PATH or a postgresql:// URL (`compliance-bake "
            "docs fixtures`); --fixtures DIR is its alias.  [default: the bundled demo fixtures]",
        ),
        click.option(
            "--registry-map",
            type=click.Path(path_type=Path, dir_okay=False),
            help="TOML file naming a database registry's tables, columns or queries, and its "
            "states (`compliance-bake docs fixtures`).  [default: the four default tables]",
        ),
    )


def out_option(help: str) -> Callable[[F], F]:
    """--out DIR, the folder of a bake's files, declared once for every command that writes or
    serves them; `help` says what this command keeps there."""
    return click.option(
        "--out",
        "out_dir",
        type=click.Path(path_type=Path, file_okay=False),
        default=Path("out"),
        show_default=True,
        help=help,
    )


def now_option(clock: str) -> Callable[[F], F]:
    """--now ISO8601, the run's one clock (compliance_bake.clock.resolve_now falls back to
    SOURCE_DATE_EPOCH, then the system clock), declared once; `clock` says what it times here."""
    return click.option(
        "--now",
        metavar="ISO8601",
        help=f"{clock}, e.g. 2026-11-22T04:06:00Z.  [default: $SOURCE_DATE_EPOCH, else now]",
    )


def timeout_option(exchanges: str) -> Callable[[F], F]:
    """--timeout SECONDS, one deadline per exchange with a URL, declared once; `exchanges` says
    what this command fetches, so its --help names nothing the command never asks."""
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=DEFAULT_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help=f"Seconds for each exchange with {exchanges}: connecting to the last byte, one "
        "deadline.",
    )


waivers_option = click.option(
    "--waivers",
    "waivers_file",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Known, accepted exceptions (TOML [[waiver]]: state, partner, optional kind and "
    "question fields, justification, expires, approvedBy): each failing item an unexpired "
    "waiver matches is waived, not passed, and recorded in the signed snapshot "
    "(`compliance-bake docs waivers`). A bad waiver exits 2 and writes nothing.",
)
secret_file_option = click.option(
    "--secret-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="File holding REPORT_SIGNING_SECRET (mode 0600). Else $REPORT_SIGNING_SECRET, "
    "$REPORT_SIGNING_SECRET_FILE, then the file `secret mint` made.",
)


def _remember_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """Under --json, an error (exit 2/3/4) is also a JSON object on stdout (cli/main.py)."""
    if value:
        ctx.meta["compliance_bake.json"] = True
    return value


json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    is_eager=True,
    callback=_remember_json,
    help="Print machine-readable JSON on stdout instead of tables (errors too).",
)
quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress bar and no phase lines on stderr.",
)


def registry_source(fixtures_dir: str | None, registry_map: Path | None) -> str | Path:
    """The registry source of --registry (--fixtures), else the bundled demo fixtures; with
    --registry-map, the source carrying its map (`inputs.registry_map.with_map`)."""
    from compliance_bake.inputs.registry_map import with_map
    from compliance_bake.resources import demo_fixtures_dir

    if registry_map is not None:
        return with_map(fixtures_dir, registry_map)
    return fixtures_dir if fixtures_dir is not None else demo_fixtures_dir()


keys_file_option = click.option(
    "--keys-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path(".compliance-bake") / "agent-keys.json",
    show_default=True,
    envvar="COMPLIANCE_AGENT_KEYS_FILE",
    help="The agent-key file (hashes only, mode 0600). Env: COMPLIANCE_AGENT_KEYS_FILE.",
)


def key_file_option(default: str) -> Callable[[F], F]:
    """--key-file, where `signing-key mint` and `witness-key mint` write a key pair; the command
    resolves None to `default` itself (the signing key's default lives with its module, which
    --help does not import)."""
    return click.option(
        "--key-file",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Where to write the private key; the public key goes beside it, `.pem` replaced by "
        f"`.pub.pem`.  [default: {default}]",
    )


# The shadow matrix's checks in flight: a bake's option only (`check` asks one question).
concurrency_option = click.option(
    "--concurrency",
    type=click.IntRange(1, 512),
    default=32,
    show_default=True,
    help="Checks in flight against --target.",
)


@dataclass(frozen=True, slots=True)
class TargetArgs:
    """--target URL and how to talk to it, one field per option of target_options()."""

    target_url: str | None
    agent_key_file: Path | None
    target_profile: Path | None
    explain: bool
    timeout: float
    retries: int

    def http_target(self, concurrency: int) -> Any:
        """The HTTP target for --target, or None. A bad URL, key or profile is bad usage
        (exit 2), found before any request is sent."""
        if self.target_url is None:
            source = click.get_current_context().get_parameter_source("target_profile")
            if self.target_profile is not None and source is not ParameterSource.ENVIRONMENT:
                raise click.UsageError("--target-profile needs --target URL")
            if self.explain:
                raise click.UsageError("--explain needs --target URL")
            return None
        from compliance_bake.targets.agent_key import resolve_agent_key
        from compliance_bake.targets.http import HttpSettings, HttpTarget
        from compliance_bake.targets.profile_file import builtin_profile, load_profile
        from compliance_bake.targets.routes import parse_target_url

        parsed = parse_target_url(self.target_url)
        file = self.target_profile
        profile = builtin_profile() if file is None else load_profile(file)
        settings = HttpSettings(timeout=self.timeout, concurrency=concurrency, retries=self.retries)
        sink = None
        if self.explain:
            from compliance_bake.report.escape import visible
            from compliance_bake.targets.explain import render

            def sink(record: Any) -> None:
                click.echo(render(record, visible), err=True)

        return HttpTarget(parsed, resolve_agent_key(self.agent_key_file), settings, profile, sink)


def target_options(exchanges: str) -> Callable[[F], F]:
    """--target URL and how to talk to it: the key, the profile, the timeout, the retries,
    handed to the command as one `target: TargetArgs`; `exchanges` says what the command's
    --timeout bounds (a bake also fetches --previous)."""
    return lambda command: _as_one(
        "target",
        TargetArgs,
        command,
        click.option(
            "--target",
            "target_url",
            metavar="URL",
            help="Base URL of a live compliance service (e.g. http://127.0.0.1:8000) to ask "
            "instead of the in-process engine. A user name or password in it is never printed "
            "or written.",
        ),
        click.option(
            "--agent-key-file",
            type=click.Path(path_type=Path, dir_okay=False),
            help="File holding the agent key sent to --target, as `Authorization: Bearer` "
            "or as the target profile's [auth] says (mode 0600). Without it, "
            "$COMPLIANCE_AGENT_KEY, which holds the key itself.",
        ),
        click.option(
            "--target-profile",
            type=click.Path(path_type=Path, dir_okay=False),
            envvar="COMPLIANCE_TARGET_PROFILE",
            help="TOML file saying how --target is asked: routes, auth header, where each "
            "answer field is (`compliance-bake docs target-profiles`).  [default: the built-in "
            "profile, "
            "`compliance-bake target profile show`; env: COMPLIANCE_TARGET_PROFILE]",
        ),
        click.option(
            "--explain",
            is_flag=True,
            help="Print to stderr the first request to --target of each operation, its raw "
            "answer and each profile field's value (the agent key masked).",
        ),
        timeout_option(exchanges),
        click.option(
            "--retries",
            type=click.IntRange(0, 10),
            default=3,
            show_default=True,
            help="Retries of a request to --target that failed in passing (connection, "
            "cut-short body, 429, 5xx), with backoff and jitter, inside the request's one "
            "--timeout deadline (a timeout is not retried).",
        ),
    )


def audit_engine_options(command: F) -> F:
    """--engine, --spark-master and --spark-conf: where the ZIP-window audit runs, the same for
    `audit deep` and `bake snapshot --deep-audit`, handed to the command as one
    `engine: EngineOptions` (engine_options())."""
    return _as_one(
        "engine",
        engine_options,
        command,
        click.option(
            "--engine",
            type=click.Choice(["duckdb", "postgres", "spark"]),
            default="duckdb",
            show_default=True,
            help="Where the ZIP-window audit runs: embedded DuckDB, inside the PostgreSQL server "
            "that holds the plays (postgresql:// sources; `compliance-bake docs engines` says "
            "when it pays), or Apache Spark (pip install 'compliance-bake[spark]'; Java 17+ for "
            "local[N]).",
        ),
        click.option(
            "--spark-master",
            metavar="URL",
            default="local[*]",
            show_default=True,
            help="With --engine spark: local[N] (N cores here), or sc://HOST:PORT for a Spark "
            "Connect server (an existing cluster).",
        ),
        click.option(
            "--spark-conf",
            "spark_conf",
            metavar="KEY=VALUE",
            multiple=True,
            help="With --engine spark: a Spark setting, e.g. spark.executor.memory=4g "
            "(repeatable).",
        ),
    )


def engine_options(
    engine: str, spark_master: str, spark_conf: tuple[str, ...]
) -> Any:  # EngineOptions; the audit package is imported only when a command runs
    from compliance_bake.audit.engines.interface import EngineOptions

    pairs = []
    for item in spark_conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="'--spark-conf'")
        pairs.append((key.strip(), value))
    if engine != "spark" and (spark_conf or spark_master != "local[*]"):
        raise click.UsageError("--spark-master and --spark-conf need --engine spark")
    return EngineOptions(engine=engine, spark_master=spark_master, spark_conf=tuple(pairs))


def key_option(
    flag: str, dest: str, help: str, metavar: str | None = "PEM", **flags: Any
) -> Callable[[F], F]:
    """An Ed25519 key file in PEM, private or public: the key pairs `signing-key mint` and
    `witness-key mint` write; `flags` are click's own (`required`, `multiple`)."""
    return click.option(
        flag,
        dest,
        type=click.Path(path_type=Path, dir_okay=False),
        metavar=metavar,
        help=help,
        **flags,
    )


def public_key_option(
    flag: str, dest: str, help: str, metavar: str | None = "PEM"
) -> Callable[[F], F]:
    """A repeatable trusted Ed25519 public key file (`verify`, `diff`, `bake --previous`);
    none given: $COMPLIANCE_PUBLIC_KEY_FILE (signing.signing_key.public_keys_from)."""
    return key_option(flag, dest, help, metavar, multiple=True)


def plays_source_options(command: F) -> F:
    """--plays-columns, --plays-table and --plays-query: how to read the plays source, handed
    to the command as one `plays_options: PlaysOptions` (plays_options())."""
    return _as_one(
        "plays_options",
        plays_options,
        command,
        click.option(
            "--plays-columns",
            metavar="MAP",
            help="Which column holds each field: play_id=COL,partner=COL,state=COL,zip=COL (or "
            "zip_prefix=COL for 3-digit ZIP prefixes),enriched_at=COL; any subset, the rest keep "
            "their names.",
        ),
        click.option(
            "--plays-table",
            metavar="NAME",
            help="With a database --plays: the table (or SCHEMA.TABLE) that holds the plays.",
        ),
        click.option(
            "--plays-query",
            metavar="SQL",
            help="With a database --plays: one SELECT whose rows are the plays (run as a "
            "subquery in a read-only transaction). Give it or --plays-table, not both.",
        ),
    )


def plays_options(
    plays_columns: str | None, plays_table: str | None, plays_query: str | None
) -> Any:
    """The PlaysOptions of the command line (bad input: InputError, exit 2)."""
    from compliance_bake.audit.columns import parse_columns
    from compliance_bake.audit.engines.interface import PlaysOptions

    return PlaysOptions(parse_columns(plays_columns), plays_table, plays_query)
