// A second compliance service for Bun, written from a description of one, not from this code:
// the kind an operator of another company runs, that decides on more than licences and has its own shadow.
//
// - no authentication;
// - POST /v1/regulatory/check with a JSON body {nodeId, stateCode, sportId, marketId,
//   wagerAmount (a number), betType}; answered {ok, regulatory: {allowed, status, reason?,
//   stake}} with HTTP 200 when allowed and 403 when blocked;
// - the same POST with ?shadow=true: the same decision, always HTTP 200, and no side effect
//   (a real check that is allowed counts its stake toward the partner's daily total; a shadow
//   check does not);
// - blocks, each with its own reason: no active licence (`Partner not licensed in <state>`,
//   the specification's words), identity not verified, a stake over the state's single or
//   daily limit, a bet type or a sport the state does not take;
// - GET /v1/regulatory/status?state=..&node=.. answers the panel with per-sport limits, some
//   of them fractions (`min_wager: 0.5`);
// - GET /health answers {ok, regulatory: {states}}: no runtime;
// - POST /test/identity {nodeId, verified}: how a test tells it that a partner's identity is
//   (not) verified; GET /test/stakes: the daily totals, for a test to see the side effects.
//
// - with LIMITS (a limits.json: the operator's regulatory_limits rows), the whole policy instead,
//   in its order: licence, the state's wager types, the limit row (a partner's own active row
//   before the state-wide one, effective_from <= now < effective_to, now from NOW (Unix
//   seconds) or the clock), max wager, min wager, bet type, identity (GEO's identityVerified),
//   age (default 21), ZIP prefix; a field the request does not carry is not held to its rule.
//   BROKEN (comma-separated) breaks rules, one switch each: licence (any partner allowed),
//   suspended (a suspended licence counts as active), max (no maximum), max-exclusive (exactly
//   the maximum blocked), min (no minimum), min-exclusive (exactly the minimum blocked),
//   bet-type (any bet type), age (any age), identity (identity never required).
//
//   bun run tests/targets/services/bun_regulatory.ts     env: FIXTURES (a licences.json),
//   LIMITS, GEO (a geo.json), NOW, BROKEN
// Listens on 127.0.0.1 on a free port and prints `listening on http://127.0.0.1:PORT`.

type Licence = { state: string; status: string };
type Partner = { nodeId: string; licences: Licence[] };
type State = { code: string; wagerTypes: string[]; limits?: Record<string, number> };
type Registry = { states: State[]; partners: Partner[] };
type Decision = { allowed: boolean; status: number; reason?: string };

const registry: Registry = await Bun.file(process.env.FIXTURES ?? "").json();
const states = new Map(registry.states.map((s) => [s.code, s]));
const unverified = new Set<string>();
const stakes = new Map<string, number>(); // `${nodeId}/${state}` -> today's allowed stake
const BET_TYPES = new Set(["straight", "parlay"]);
// The service's own per-sport limits, shown on the status panel (not the registry's).
const SPORT_LIMITS = [
  { sport: "basketball", min_wager: 1, max_wager: 10000 },
  { sport: "soccer", min_wager: 0.5, max_wager: 5000 },
  { sport: "football", min_wager: 2.5, max_wager: 10000 },
];

function licence(nodeId: string, state: string): string | null {
  const partner = registry.partners.find((p) => p.nodeId === nodeId);
  const found = partner?.licences.find((l) => l.state === state);
  return found ? found.status : null;
}

function decide(asked: Record<string, unknown>, shadow: boolean): Decision {
  const nodeId = String(asked.nodeId ?? "");
  const state = String(asked.stateCode ?? "");
  const sport = String(asked.sportId ?? "");
  const market = String(asked.marketId ?? "");
  const amount = asked.wagerAmount;
  const rules = states.get(state);
  if (!rules || licence(nodeId, state) !== "active") {
    return { allowed: false, status: 403, reason: `Partner not licensed in ${state}` };
  }
  if (unverified.has(nodeId)) {
    return { allowed: false, status: 403, reason: `Identity verification required in ${state}` };
  }
  if (!rules.wagerTypes.includes(`${sport}.${market}`)) {
    return { allowed: false, status: 403, reason: `${sport} ${market} is not offered in ${state}` };
  }
  if (!BET_TYPES.has(String(asked.betType))) {
    return { allowed: false, status: 403, reason: `Bet type ${asked.betType} refused` };
  }
  if (typeof amount !== "number" || !(amount > 0)) {
    return { allowed: false, status: 403, reason: "Stake must be a positive number" };
  }
  const single = rules.limits?.maxStakeUsd ?? Infinity;
  if (amount > single) {
    return { allowed: false, status: 403, reason: `Stake ${amount} over the ${state} limit of ${single}` };
  }
  const key = `${nodeId}/${state}`;
  const daily = rules.limits?.maxDailyStakeUsd ?? Infinity;
  const today = stakes.get(key) ?? 0;
  if (today + amount > daily) {
    return { allowed: false, status: 403, reason: `Daily stake limit of ${daily} reached in ${state}` };
  }
  if (!shadow) stakes.set(key, today + amount); // the real path only: shadow has no effect
  return { allowed: true, status: 200 };
}

type Row = {
  policy_key: string; status: string; state_code: string; sport_id: string; market_id: string;
  node_id?: string | null; max_wager?: number | null; min_wager?: number | null;
  allowed_bet_types?: string[] | null; effective_from: number; effective_to?: number | null;
  special_rules?: { min_age?: number; require_identity_verification?: boolean;
    allowed_zip_prefixes?: string[] } | null;
};
const limits: Row[] | null = process.env.LIMITS
  ? (await Bun.file(process.env.LIMITS).json()).limits
  : null;
const verified = new Set<string>(
  process.env.GEO
    ? (await Bun.file(process.env.GEO).json()).partners
        .filter((p: { identityVerified?: boolean }) => p.identityVerified === true)
        .map((p: { nodeId: string }) => p.nodeId)
    : [],
);
const broken = new Set((process.env.BROKEN ?? "").split(",").filter((s) => s !== ""));
const NOW = process.env.NOW ? Number(process.env.NOW) : null;

function cents(value: number): number {
  return Math.round(value * 100);
}

function policy(asked: Record<string, unknown>): Decision {
  const nodeId = String(asked.nodeId ?? "");
  const state = String(asked.stateCode ?? "");
  const sport = String(asked.sportId ?? "");
  const market = String(asked.marketId ?? "");
  const rules = states.get(state);
  const held = licence(nodeId, state);
  const active = held === "active" || (broken.has("suspended") && held === "suspended");
  if (!broken.has("licence") && (!rules || !active)) {
    return { allowed: false, status: 403, reason: `Partner not licensed in ${state}` };
  }
  if (rules && !rules.wagerTypes.includes(`${sport}.${market}`)) {
    const reason = `Wager type ${sport}.${market} not permitted in ${state}`;
    return { allowed: false, status: 403, reason };
  }
  const now = NOW ?? Math.floor(Date.now() / 1000);
  const holding = (limits ?? []).filter(
    (r) => r.state_code === state && r.sport_id === sport && r.market_id === market &&
      r.status === "active" && r.effective_from <= now &&
      (r.effective_to == null || now < r.effective_to),
  );
  const row = holding.find((r) => r.node_id === nodeId) ?? holding.find((r) => r.node_id == null);
  const age = typeof asked.age === "number" ? asked.age : null;
  const minAge = row?.special_rules?.min_age ?? 21;
  const ageBlock: Decision = {
    allowed: false, status: 403, reason: `Minimum age ${minAge} required in ${state} (got ${age})`,
  };
  if (!row) {
    return age !== null && age < minAge && !broken.has("age") ? ageBlock : { allowed: true, status: 200 };
  }
  const amount = typeof asked.wagerAmount === "number" ? cents(asked.wagerAmount) : null;
  if (amount !== null && row.max_wager != null && !broken.has("max")) {
    const max = cents(row.max_wager);
    if (amount > max || (broken.has("max-exclusive") && amount === max)) {
      return { allowed: false, status: 403, reason: `Exceeds max wager $${row.max_wager}` };
    }
  }
  if (amount !== null && row.min_wager != null && !broken.has("min")) {
    const min = cents(row.min_wager);
    if (amount < min || (broken.has("min-exclusive") && amount === min)) {
      return { allowed: false, status: 403, reason: `Below min wager $${row.min_wager}` };
    }
  }
  const betType = typeof asked.betType === "string" ? asked.betType : null;
  if (betType !== null && row.allowed_bet_types && !broken.has("bet-type") &&
      !row.allowed_bet_types.includes(betType)) {
    return { allowed: false, status: 403, reason: `Bet type '${betType}' not allowed in ${state}` };
  }
  const special = row.special_rules ?? {};
  if (special.require_identity_verification && !broken.has("identity") &&
      (!verified.has(nodeId) || unverified.has(nodeId))) {
    return { allowed: false, status: 403, reason: `Identity verification required in ${state}` };
  }
  if (age !== null && age < minAge && !broken.has("age")) return ageBlock;
  const zip = typeof asked.zipCode === "string" ? asked.zipCode : null;
  const prefixes = special.allowed_zip_prefixes;
  if (zip !== null && prefixes && !prefixes.some((p) => zip.startsWith(p))) {
    return { allowed: false, status: 403, reason: `ZIP ${zip} not in allowed prefixes for ${state}` };
  }
  return { allowed: true, status: 200 };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/health" && request.method === "GET") {
      return json(200, { ok: true, regulatory: { states: [...states.keys()] } });
    }
    if (url.pathname === "/v1/regulatory/check" && request.method === "POST") {
      const asked = await request.json();
      const shadow = url.searchParams.get("shadow") === "true";
      const decision = limits ? policy(asked) : decide(asked, shadow);
      const stake = { amount: asked.wagerAmount, currency: "USD" };
      const body = { ok: true, regulatory: { ...decision, stake, mode: shadow ? "shadow" : "live" } };
      return json(shadow ? 200 : decision.status, body);
    }
    if (url.pathname === "/v1/regulatory/status" && request.method === "GET") {
      const state = url.searchParams.get("state") ?? "";
      const nodeId = url.searchParams.get("node") ?? "";
      const rules = states.get(state);
      return json(200, {
        ok: rules !== undefined,
        regulatory: {
          state,
          licenseStatus: licence(nodeId, state) ?? "unlicensed",
          limits: rules ? SPORT_LIMITS : [],
        },
      });
    }
    if (url.pathname === "/test/identity" && request.method === "POST") {
      const asked = await request.json();
      if (asked.verified === false) unverified.add(String(asked.nodeId));
      else unverified.delete(String(asked.nodeId));
      return json(200, { ok: true, unverified: [...unverified] });
    }
    if (url.pathname === "/test/stakes" && request.method === "GET") {
      return json(200, { ok: true, stakes: Object.fromEntries(stakes) });
    }
    return json(404, { ok: false, error: "no such route" });
  },
});

console.log(`listening on http://127.0.0.1:${server.port}`);
