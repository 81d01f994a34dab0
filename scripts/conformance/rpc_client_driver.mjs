// Drive a pi in RPC mode through the TypeScript pi's own RpcClient class and print, as one JSON
// object, what every call returned and every event that arrived.
//
//   node rpc_client_driver.mjs spec.json
//
// spec: {rpcClient: ".../dist/modes/rpc/rpc-client.js", cliPath, cwd, env, model, provider,
//        args, steps: [...]}. RpcClient starts `node <cliPath> --mode rpc ...`; the harness puts
// a `node` shim first on PATH that starts the implementation under test.
// A step is {call: "methodName", args: [...], save: "name"} or {sleep: ms}; a call with
// {async: "name"} is not awaited until a later {await: "name"} step records its result;
// {waitEvent: "message_update"} waits until such an event has arrived. A string argument
// "$name.a.0.b" is replaced by that path into the result saved as "name".
// Results of promptAndWait / collectEvents are recorded as their event count: the events
// themselves are in the global "events" list, in arrival order.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { RpcClient } = await import(pathToFileURL(spec.rpcClient).href);

const saved = {};
const pending = {};
const resolve = (v) => {
	if (typeof v === "string" && v.startsWith("$")) {
		const [name, ...path] = v.slice(1).split(".");
		let cur = saved[name];
		for (const p of path) cur = cur == null ? undefined : cur[p];
		return cur;
	}
	if (Array.isArray(v)) return v.map(resolve);
	if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
	return v;
};

const client = new RpcClient({
	cliPath: spec.cliPath,
	cwd: spec.cwd,
	env: spec.env,
	provider: spec.provider,
	model: spec.model,
	args: spec.args,
});
const events = [];
const steps = [];
// RpcClient echoes the agent's stderr to ours; keep our stdout for the JSON result only.
const origWrite = process.stderr.write.bind(process.stderr);
process.stderr.write = () => true;
const withTimeout = (p, ms, what) =>
	Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`driver timeout: ${what}`)), ms))]);

try {
	await client.start();
	steps.push({ call: "start", ok: true });
} catch (e) {
	steps.push({ call: "start", ok: false, error: String(e?.message ?? e) });
}
client.onEvent((e) => events.push(e));
for (const step of spec.steps) {
	if (step.sleep !== undefined) {
		await new Promise((r) => setTimeout(r, step.sleep));
		continue;
	}
	if (step.waitEvent !== undefined) {
		// poll until an event of this type has arrived (at most 15 s)
		const end = Date.now() + 15000;
		while (!events.some((e) => e.type === step.waitEvent) && Date.now() < end) {
			await new Promise((r) => setTimeout(r, 20));
		}
		continue;
	}
	if (step.await !== undefined) {
		// settle a call started earlier with {async: name}
		steps.push(await pending[step.await]);
		continue;
	}
	const run = async () => {
	const rec = { call: step.call };
	try {
		const fn = client[step.call];
		if (typeof fn !== "function") throw new Error(`RpcClient has no method ${step.call}`);
		let result = await withTimeout(fn.apply(client, resolve(step.args ?? [])), step.timeout ?? 10000, step.call);
		if (step.save) saved[step.save] = result;
		if (step.call === "promptAndWait" && Array.isArray(result)) {
			result = { eventCount: result.length };
		} else if (step.call === "collectEvents" && Array.isArray(result)) {
			// How many it caught depends on how soon after the prompt it started listening (a
			// race on a loaded machine); every event is compared in full anyway.
			result = { lastEvent: result.at(-1)?.type };
		}
		if (step.call === "onEvent") result = typeof result;
		rec.ok = true;
		rec.result = result === undefined ? "<undefined>" : result;
	} catch (e) {
		rec.ok = false;
		rec.error = String(e?.message ?? e);
	}
	return rec;
	};
	if (step.async !== undefined) {
		pending[step.async] = run();
		continue;
	}
	steps.push(await run());
}
const stderr = client.getStderr();
try {
	await withTimeout(client.stop(), 5000, "stop");
	steps.push({ call: "stop", ok: true });
} catch (e) {
	steps.push({ call: "stop", ok: false, error: String(e?.message ?? e) });
}
process.stderr.write = origWrite;
// exit only once the (possibly large) result has been flushed to the pipe
process.stdout.write(JSON.stringify({ steps, events, stderr }), () => process.exit(0));
