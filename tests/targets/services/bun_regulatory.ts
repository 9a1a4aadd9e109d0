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
//   bun run tests/targets/services/bun_regulatory.ts     env: FIXTURES (a licences.json)
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
      const decision = decide(asked, shadow);
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
