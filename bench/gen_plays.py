"""Generate a plays file of any size (CSV, JSON Lines or Parquet) that audits clean, or dirty.

    python bench/gen_plays.py --rows 10000000 --out bench/.data/plays-10m.csv [--now ISO] [--seed 0]
        [--dirty]

Every play is by a partner of the demo licences (`fixtures/licences.json`) in a state where it
holds an active licence, from a real ZIP of that state (taken from `zip_index()`, the index the
audit joins against). `enriched_at` falls inside the 90 days before `--now` for most plays; about
3 in 100 were enriched earlier (outside the window) and 1 in 100 never (empty). `placed_at` is a
few seconds to a day before `enriched_at`. DuckDB writes the file: 10,000,000 rows take about
a minute and a half on two cores. The output depends only on the arguments.

With --dirty, about 1 play in 100 breaks the audit, a quarter each way: an unknown state (`XX`),
a ZIP that lost its leading digit (malformed-zip), an `enriched_at` that is no time
(malformed-timestamp), and a partner with no licence (partner-not-licensed when in the window);
the other plays are those of the clean file.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

# (partner, state) pairs with an active licence in the demo fixtures.
DEMO_LICENSED = (
    ("node-bay-01", "MA"),
    ("node-shore-02", "NJ"),
    ("node-corridor-03", "MA"),
    ("node-corridor-03", "NJ"),
)
DEFAULT_NOW = "2026-11-22T04:06:00Z"
WAGER_TYPES = ("basketball.totals", "basketball.spread", "football.spread", "soccer.moneyline")


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "(FORMAT csv, HEADER true)"
    if suffix in (".jsonl", ".ndjson"):
        return "(FORMAT json)"
    if suffix == ".parquet":
        return "(FORMAT parquet, COMPRESSION zstd)"
    raise SystemExit(f"{path}: unknown format (use .csv, .jsonl, .ndjson or .parquet)")


_COLUMNS = ("play_id", "partner", "state", "zip", "placed_at", "enriched_at", "wager_type", "stake")
# The columns of a dirty play: `k` (1 to 4) picks the way it breaks the audit, 0 keeps it clean.
_DIRTY = """
  play_id,
  CASE WHEN k = 1 THEN 'node-rogue-09' ELSE partner END AS partner,
  CASE WHEN k = 2 THEN 'XX' ELSE state END AS state,
  CASE WHEN k = 3 THEN substr(zip, 2) ELSE zip END AS zip,
  placed_at,
  CASE WHEN k = 4 THEN 'not a time' ELSE enriched_at END AS enriched_at,
  wager_type, stake
"""


def generate(
    rows: int, out: Path, now: str = DEFAULT_NOW, seed: int = 0, dirty: bool = False
) -> Path:
    import duckdb

    from compliance_bake.inputs.zipindex import zip_index

    states = sorted({state for _, state in DEMO_LICENSED})
    places = zip_index().places.values()
    zips = {s: sorted(p.zip_code for p in places if p.state == s) for s in states}
    now_us = int(datetime.fromisoformat(now.replace("Z", "+00:00")).astimezone(UTC).timestamp())
    now_us *= 1_000_000
    window_us = 90 * 86_400 * 1_000_000
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(
        "CREATE TABLE pairs AS SELECT * FROM (VALUES "
        + ", ".join(f"({i}, '{p}', '{s}')" for i, (p, s) in enumerate(DEMO_LICENSED))
        + ") t(k, partner, state)"
    )
    con.execute(
        "CREATE TABLE zips AS SELECT state, list(zip ORDER BY zip) AS zs FROM ("
        + " UNION ALL ".join(
            f"SELECT '{s}' AS state, unnest(${i + 1}::VARCHAR[]) AS zip"
            for i, s in enumerate(states)
        )
        + ") GROUP BY state",
        [zips[s] for s in states],
    )
    wagers = "[" + ", ".join(f"'{w}'" for w in WAGER_TYPES) + "]"
    out.parent.mkdir(parents=True, exist_ok=True)
    # hash(i, seed) drives every choice, so the file does not depend on thread scheduling.
    con.execute(
        f"""
        COPY (
          WITH r AS (
            SELECT i, (hash(i, {seed}) >> 1)::BIGINT AS h, (hash(i, {seed} + 1) >> 1)::BIGINT AS g
            FROM range({rows}) t(i)
          ), e AS (
            SELECT i, h, g,
              CASE WHEN h % 100 = 0 THEN NULL
                   WHEN h % 100 < 4 THEN {now_us} - {window_us} - 1000 - (g % {window_us})
                   ELSE {now_us} - (g % {window_us}) END AS enriched_us
            FROM r
          )
          SELECT {_DIRTY if dirty else ", ".join(_COLUMNS)} FROM (
          SELECT
            CASE WHEN {"(g >> 44) % 100 = 7" if dirty else "false"}
                 THEN 1 + ((g >> 52) % 4)::INT ELSE 0 END AS k, i,
            printf('p%010d', i) AS play_id,
            pairs.partner AS partner,
            pairs.state AS state,
            zs[1 + ((h >> 8) % len(zs))::BIGINT] AS zip,
            strftime(
              make_timestamp(coalesce(enriched_us, {now_us}) - 1000 * ((g >> 20) % 86400000)),
              '%Y-%m-%dT%H:%M:%S.%gZ') AS placed_at,
            CASE WHEN enriched_us IS NULL THEN NULL
                 ELSE strftime(make_timestamp(enriched_us), '%Y-%m-%dT%H:%M:%S.%gZ') END
              AS enriched_at,
            {wagers}[1 + ((h >> 16) % {len(WAGER_TYPES)})::BIGINT] AS wager_type,
            printf('%.2f', ((g >> 40) % 50000) / 100.0 + 1) AS stake
          FROM e
          JOIN pairs ON pairs.k = (h >> 4) % {len(DEMO_LICENSED)}
          JOIN zips USING (state)
          ) ORDER BY i
        ) TO '{out}' {_format(out)}
        """
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--now", default=DEFAULT_NOW)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dirty", action="store_true", help="about 1 play in 100 violates")
    args = parser.parse_args()
    generate(args.rows, args.out, args.now, args.seed, args.dirty)


if __name__ == "__main__":
    main()
