// A compliance service written for Bun that made its own choices where the specification leaves
// them open: the check is `POST /v2/wagers/eligibility` with a JSON body, answered HTTP 200 with
// the decision inside `data`; the status panel takes `stateCode` and `nodeId`; the key travels in
// `X-Agent-Key`; /health reports `bunVersion`. The HTTP target reaches it only through a target
// profile (tests/targets/profiles/bun.toml).
//
//   bun run tests/targets/services/bun_service.ts
//   env: FIXTURES (a licences.json), AGENT_KEY, LIE=1 (every check allowed: a lying service)
// Listens on 127.0.0.1 on a free port and prints `listening on http://127.0.0.1:PORT`.

type Licence = { state: string; status: string };
type Partner = { nodeId: string; licences: Licence[] };
type State = { code: string; wagerTypes: string[]; limits?: Record<string, number> };
type Registry = { states: State[]; partners: Partner[] };

const registry: Registry = await Bun.file(process.env.FIXTURES ?? "").json();
const key = process.env.AGENT_KEY ?? "";
const lie = process.env.LIE === "1";
const states = new Map(registry.states.map((s) => [s.code, s]));

function licence(nodeId: string, state: string): string | null {
  const partner = registry.partners.find((p) => p.nodeId === nodeId);
  const found = partner?.licences.find((l) => l.state === state);
  return found ? found.status : null;
}

function decide(nodeId: string, state: string, wagerType: string) {
  const rules = states.get(state);
  if (lie) return { allowed: true, status: 200 };
  if (!rules || licence(nodeId, state) !== "active") {
    return { allowed: false, status: 403, reason: `Partner not licensed in ${state}` };
  }
  if (!rules.wagerTypes.includes(wagerType)) {
    return { allowed: false, status: 403, reason: `Wager type ${wagerType} not permitted in ${state}` };
  }
  return { allowed: true, status: 200 };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function refuse(status: number, code: string, message: string): Response {
  return json(status, { error: { code, message } });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/health" && request.method === "GET") {
      return json(200, { ok: true, states: [...states.keys()], bunVersion: Bun.version });
    }
    if (request.headers.get("x-agent-key") !== key) {
      return refuse(401, "unauthorized", "send the agent key in X-Agent-Key");
    }
    if (url.pathname === "/v2/wagers/eligibility" && request.method === "POST") {
      const asked = await request.json();
      const decision = decide(asked.nodeId, asked.stateCode, asked.wager?.type);
      return json(200, { data: decision, meta: { api: "v2", node: asked.nodeId } });
    }
    if (url.pathname === "/api/compliance/status" && request.method === "GET") {
      const state = url.searchParams.get("stateCode") ?? "";
      const nodeId = url.searchParams.get("nodeId") ?? "";
      const rules = states.get(state);
      return json(200, {
        ok: rules !== undefined,
        state,
        licenseStatus: licence(nodeId, state) ?? "unlicensed",
        hasLimits: Object.keys(rules?.limits ?? {}).length > 0,
      });
    }
    return refuse(404, "not_found", "no such route");
  },
});

console.log(`listening on http://127.0.0.1:${server.port}`);
