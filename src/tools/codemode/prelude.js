// The script's world, evaluated once per run before the script. `host` is the engine's one
// native function; everything a script can reach goes through it. Globals are defined
// read-only so a script cannot swap them out from under the engine.
(function (host, toolsJson, storeJson) {
	"use strict";
	const stringify = JSON.stringify;
	const parse = JSON.parse;
	const OUTPUT_CHARS = 16777216;
	const OUTPUT_ITEMS = 100000;
	const STORE_VALUE_CHARS = 262144;
	const STORE_TOTAL_CHARS = 1048576;
	const STORE_HINT =
		"store() is for small state such as IDs or summaries. Show images with image(), keep large data in variables, or write it to a file with a tool.";
	const EXIT = Object.freeze({});
	const waiting = new Map();
	let nextCall = 1;
	let finished = false;
	let outputChars = 0;
	let outputItems = 0;

	function errorText(e) {
		const head = e.message ? e.name + ": " + e.message : String(e.name);
		const frames = typeof e.stack === "string" ? e.stack.split("\n").filter((l) => l.trim() && !l.includes("codemode-prelude.js")) : [];
		return [head].concat(frames).join("\n");
	}
	function show(v) {
		if (typeof v === "string") return v;
		if (v instanceof Error) return errorText(v);
		if (typeof v === "number") return String(v);
		try {
			const json = stringify(v);
			return json === undefined ? String(v) : json;
		} catch (_) {
			return String(v);
		}
	}
	// As pi words it: an Error as `Name: message` and its frames, any other value as an Error's
	// message.
	function describe(e) {
		try {
			if (e instanceof Error) return errorText(e);
			return "Error: " + String(show(e));
		} catch (_) {
			return "The script threw a value that cannot be described";
		}
	}
	function done(ok, payload, writes) {
		if (finished) return;
		finished = true;
		host("done", ok, payload === undefined ? null : payload, writes === undefined ? null : writes);
	}

	const stored = new Map(Object.entries(parse(storeJson)));
	const writes = new Map();
	let storedChars = 0;
	for (const [k, json] of stored) storedChars += k.length + json.length;
	function checkKey(fn, key) {
		if (typeof key !== "string") throw new TypeError(fn + "() key must be a string");
	}
	function store(key, value) {
		checkKey("store", key);
		const before = stored.has(key) ? key.length + stored.get(key).length : 0;
		if (value === undefined) {
			stored.delete(key);
			storedChars -= before;
			writes.set(key, undefined);
			return;
		}
		let json;
		try {
			json = stringify(value);
		} catch (e) {
			throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable: " + show(e));
		}
		if (json === undefined) throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable");
		if (json.length > STORE_VALUE_CHARS) {
			throw new RangeError("store(" + stringify(key) + ") value has " + json.length + " characters of JSON, more than the limit of " + STORE_VALUE_CHARS + ". " + STORE_HINT);
		}
		const after = storedChars - before + key.length + json.length;
		if (after > STORE_TOTAL_CHARS) {
			throw new RangeError("store is full: stored values would exceed " + STORE_TOTAL_CHARS + " characters of JSON. Delete keys with store(key, undefined). " + STORE_HINT);
		}
		stored.set(key, json);
		storedChars = after;
		writes.set(key, json);
	}
	function load(key) {
		checkKey("load", key);
		const json = stored.get(key);
		return json === undefined ? undefined : parse(json);
	}
	function writesJson() {
		const list = [];
		for (const [k, json] of writes) list.push(json === undefined ? [k] : [k, json]);
		return stringify(list);
	}

	function output(kind, data, mime) {
		if (finished) return;
		outputChars += data.length;
		outputItems++;
		if (outputChars > OUTPUT_CHARS || outputItems > OUTPUT_ITEMS) {
			const e = new RangeError(
				"script output exceeded the limit of " + OUTPUT_CHARS + " characters or " + OUTPUT_ITEMS + " text(), image(), and console calls. Print a summary instead, or write large data to a file with a tool.",
			);
			done(false, describe(e));
			throw e;
		}
		host("output", kind, data, mime === undefined ? null : mime);
	}
	function text(value) {
		let s;
		if (value === undefined || value === null || (typeof value !== "object" && typeof value !== "function")) s = String(value);
		else {
			const json = stringify(value);
			s = json === undefined ? String(value) : json;
		}
		output("text", s);
	}
	const IMAGE_EXPECTS = "image expects a base64 data URL, an { image_url } object, or an image block { type: \"image\", data, mimeType }";
	const SIGNATURES = [
		["image/png", /^iVBORw0KGg/],
		["image/jpeg", /^[/]9j[/](?!9)/],
		["image/gif", /^R0lGOD[dl]h/],
		["image/webp", /^UklG.{8}RUJQ/],
	];
	function imageUrl(v) {
		if (typeof v === "string") return v;
		if (typeof v !== "object" || v === null || Array.isArray(v)) throw new TypeError(IMAGE_EXPECTS);
		if (v.image_url !== undefined) {
			if (typeof v.image_url !== "string") throw new TypeError(IMAGE_EXPECTS);
			return v.image_url;
		}
		if (typeof v.type !== "string") throw new TypeError(IMAGE_EXPECTS);
		if (v.type !== "image") throw new TypeError('image only accepts image blocks, got "' + v.type + '"');
		if (typeof v.data !== "string" || v.data === "") throw new TypeError("image expected image block data");
		return v.data.toLowerCase().startsWith("data:") ? v.data : "data:;base64," + v.data;
	}
	function image(value) {
		const url = imageUrl(value);
		if (url === "") throw new TypeError(IMAGE_EXPECTS);
		const colon = url.indexOf(":");
		const scheme = colon === -1 ? "" : url.slice(0, colon).toLowerCase();
		if (scheme === "http" || scheme === "https") throw new TypeError("remote image URLs are not supported in tool outputs. Pass a base64 data URI instead");
		const comma = url.indexOf(",");
		const header = comma === -1 ? [] : url.slice(colon + 1, comma).split(";");
		if (scheme !== "data" || comma === -1 || header.slice(1).every((p) => p.toLowerCase() !== "base64")) {
			throw new TypeError("invalid image output. Pass a base64 data URI instead");
		}
		const data = url.slice(comma + 1).replace(/\s+/g, "");
		if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
			throw new TypeError("invalid image output. The image data is not valid base64 (truncated or corrupted?)");
		}
		const found = SIGNATURES.find((s) => s[1].test(data.slice(0, 16)));
		if (!found) throw new TypeError("invalid image output. The image data is not a PNG, JPEG, GIF, or WebP image");
		output("image", data, found[0]);
	}
	function exit() {
		done(true, undefined, writesJson());
		throw EXIT;
	}
	const consoleObject = {};
	for (const level of ["log", "info", "warn", "error", "debug"]) {
		consoleObject[level] = (...args) => output("console", args.map(show).join(" "));
	}
	Object.freeze(consoleObject);

	function caller(kind, name, spread) {
		return (...args) =>
			new Promise((resolve, reject) => {
				let json;
				try {
					const value = spread ? args : args[0];
					json = value === undefined ? "{}" : stringify(value);
				} catch (e) {
					reject(e);
					return;
				}
				const id = nextCall++;
				waiting.set(id, { resolve, reject });
				host(kind, id, name, json);
			});
	}
	const tools = Object.create(null);
	const allTools = [];
	for (const t of parse(toolsJson)) {
		const fn = caller("call", t.name, false);
		if (!(t.id in tools)) {
			tools[t.id] = fn;
			allTools.push(Object.freeze({ name: t.id, description: t.description }));
		}
		if (!(t.name in tools)) tools[t.name] = fn;
	}
	Object.freeze(tools);
	Object.freeze(allTools);
	const toolNames = allTools.map((t) => t.name);
	const squash = (n) => n.toLowerCase().replace(/[^a-z0-9]/g, "");
	const toolsProxy = new Proxy(tools, {
		get(target, key, receiver) {
			if (typeof key !== "string" || key in target || key in Object.prototype || key === "then" || key === "toJSON") {
				return Reflect.get(target, key, receiver);
			}
			const wanted = squash(key);
			const exact = toolNames.filter((n) => squash(n) === wanted);
			const close = exact.length > 0 ? exact : toolNames.filter((n) => wanted && (squash(n).includes(wanted) || wanted.includes(squash(n))));
			let message = "tools." + key + " does not exist.";
			if (close.length > 0) message += " Did you mean " + close.slice(0, 5).map((n) => "tools." + n).join(", ") + "?";
			else if (toolNames.length <= 20) message += " Available: " + toolNames.join(", ") + ".";
			message += " ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.";
			message += ' Check for a member with "' + key + '" in tools.';
			throw new TypeError(message);
		},
	});

	const models = Object.freeze({
		getModelsOfType: caller("model", "getModelsOfType", true),
		getAvailableOfType: caller("model", "getAvailableOfType", true),
		getModelOfType: caller("model", "getModelOfType", true),
		classify: caller("model", "classify", true),
		generateImages: caller("model", "generateImages", true),
	});

	const globals = {
		tools: toolsProxy,
		ALL_TOOLS: allTools,
		console: consoleObject,
		text,
		image,
		exit,
		store,
		load,
		searchTools: caller("global", "searchTools", true),
		describeTool: caller("global", "describeTool", true),
		describeNamespace: caller("global", "describeNamespace", true),
		models,
	};
	for (const key of Object.keys(globals)) {
		Object.defineProperty(globalThis, key, { value: globals[key], enumerable: true, writable: false, configurable: false });
	}

	return {
		settle(id, ok, payload) {
			const entry = waiting.get(id);
			if (!entry) return;
			waiting.delete(id);
			if (!ok) {
				entry.reject(new Error(payload));
				return;
			}
			let value;
			try {
				value = payload === null || payload === undefined ? undefined : parse(payload);
			} catch (e) {
				entry.reject(e);
				return;
			}
			entry.resolve(value);
		},
		run(fn) {
			let promise;
			try {
				promise = fn(toolsProxy, consoleObject);
			} catch (e) {
				if (e !== EXIT) done(false, describe(e));
				return;
			}
			promise.then(
				(value) => {
					let json;
					try {
						json = value === undefined ? undefined : stringify(value);
					} catch (e) {
						done(false, describe(e));
						return;
					}
					done(true, json, writesJson());
				},
				(e) => {
					if (e !== EXIT) done(false, describe(e));
				},
			);
		},
		failed(e) {
			done(false, describe(e));
		},
		stalled() {
			if (finished || waiting.size > 0) return false;
			done(false, "Error: The script is waiting on a promise that can never settle: no tool call is pending, and timers do not exist here.");
			return true;
		},
	};
})
