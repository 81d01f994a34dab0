// Stand-in for TypeBox (`typebox`, `typebox/value`, `typebox/compile`, `@sinclair/typebox` and
// its `/value` and `/compiler` subpaths) for pi extensions run by pi's Node.js bridge. `Type`
// builds plain JSON Schema objects (what pi sends to the model and validates against); `Value`
// and `Compile` check values against such a schema. Written by the pi binary into its cache.
const OPTIONAL = Symbol.for("TypeBox.Optional");
const READONLY = Symbol.for("TypeBox.Readonly");
export const Kind = Symbol.for("TypeBox.Kind");
export const Hint = Symbol.for("TypeBox.Hint");
export const OptionalKind = OPTIONAL;
export const ReadonlyKind = READONLY;

const make = (kind, schema, opts) => {
  const s = { ...schema, ...(opts ?? {}) };
  Object.defineProperty(s, Kind, { value: kind, enumerable: false });
  return s;
};
const clone = (schema) => {
  const copy = { ...schema };
  for (const sym of [Kind, OPTIONAL, READONLY]) {
    if (schema[sym] !== undefined) Object.defineProperty(copy, sym, { value: schema[sym], enumerable: false });
  }
  return copy;
};
const isOptional = (s) => Boolean(s?.[OPTIONAL]);

function object(properties, opts) {
  const props = {};
  const required = [];
  for (const [k, v] of Object.entries(properties ?? {})) {
    props[k] = v;
    if (!isOptional(v)) required.push(k);
  }
  return make("Object", { type: "object", properties: props, ...(required.length ? { required } : {}) }, opts);
}

function literalType(value) {
  if (value === null) return "null";
  return typeof value === "number" ? (Number.isInteger(value) ? "number" : "number") : typeof value;
}

export const Type = {
  String: (o) => make("String", { type: "string" }, o),
  Number: (o) => make("Number", { type: "number" }, o),
  Integer: (o) => make("Integer", { type: "integer" }, o),
  Boolean: (o) => make("Boolean", { type: "boolean" }, o),
  Null: (o) => make("Null", { type: "null" }, o),
  Any: (o) => make("Any", {}, o),
  Unknown: (o) => make("Unknown", {}, o),
  Never: (o) => make("Never", { not: {} }, o),
  Void: (o) => make("Void", { type: "null" }, o),
  Undefined: (o) => make("Undefined", { type: "null" }, o),
  BigInt: (o) => make("BigInt", { type: "integer" }, o),
  Date: (o) => make("Date", { type: "string", format: "date-time" }, o),
  Uint8Array: (o) => make("Uint8Array", { type: "string", contentEncoding: "base64" }, o),
  Literal: (value, o) => make("Literal", { const: value, type: literalType(value) }, o),
  Array: (items, o) => make("Array", { type: "array", items }, o),
  Tuple: (items, o) =>
    make("Tuple", { type: "array", prefixItems: items, items: false, minItems: items.length, maxItems: items.length }, o),
  Union: (anyOf, o) => make("Union", { anyOf }, o),
  Intersect: (allOf, o) => make("Intersect", { allOf }, o),
  Enum: (e, o) => {
    const values = Array.isArray(e) ? e : Object.values(e).filter((v) => typeof e[v] !== "number");
    return make("Enum", { anyOf: values.map((v) => ({ const: v, type: literalType(v) })) }, o);
  },
  KeyOf: (schema, o) =>
    make("Union", { anyOf: Object.keys(schema.properties ?? {}).map((k) => ({ const: k, type: "string" })) }, o),
  Record: (key, value, o) => {
    const pattern = key?.pattern;
    return make(
      "Record",
      pattern ? { type: "object", patternProperties: { [pattern]: value } } : { type: "object", additionalProperties: value },
      o,
    );
  },
  Object: object,
  Composite: (schemas, o) => object(Object.assign({}, ...schemas.map((s) => s.properties ?? {})), o),
  Partial: (schema, o) => {
    const props = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, Type.Optional(v)]));
    return object(props, o);
  },
  Required: (schema, o) => {
    const props = Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([k, v]) => {
        const c = { ...v };
        return [k, c];
      }),
    );
    return object(props, o);
  },
  Pick: (schema, keys, o) => {
    const list = Array.isArray(keys) ? keys : (keys.anyOf ?? []).map((k) => k.const);
    const props = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => list.includes(k)));
    return object(props, o);
  },
  Omit: (schema, keys, o) => {
    const list = Array.isArray(keys) ? keys : (keys.anyOf ?? []).map((k) => k.const);
    const props = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => !list.includes(k)));
    return object(props, o);
  },
  Optional: (schema, flag = true) => {
    const c = clone(schema);
    if (flag === false) delete c[OPTIONAL];
    else Object.defineProperty(c, OPTIONAL, { value: "Optional", enumerable: false, configurable: true });
    return c;
  },
  Readonly: (schema) => {
    const c = clone(schema);
    Object.defineProperty(c, READONLY, { value: "Readonly", enumerable: false });
    return c;
  },
  ReadonlyOptional: (schema) => Type.Readonly(Type.Optional(schema)),
  Unsafe: (o) => make("Unsafe", {}, o),
  Ref: (ref, o) => make("Ref", { $ref: typeof ref === "string" ? ref : `#/$defs/${ref.$id}` }, o),
  Recursive: (build, o) => {
    const self = make("This", { $ref: "#" });
    return make("Recursive", build(self), o);
  },
  Not: (schema, o) => make("Not", { not: schema }, o),
  RegExp: (re, o) => make("String", { type: "string", pattern: re instanceof RegExp ? re.source : String(re) }, o),
  TemplateLiteral: (_parts, o) => make("String", { type: "string" }, o),
  Function: (_p, _r, o) => make("Function", {}, o),
  Promise: (_t, o) => make("Promise", {}, o),
  Symbol: (o) => make("Symbol", {}, o),
  Strict: (schema) => JSON.parse(JSON.stringify(schema)),
};

// ---- checking values ------------------------------------------------------------------------

function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function* errorsOf(schema, value, path = "") {
  if (!schema || typeof schema !== "object" || Object.keys(schema).length === 0) return;
  if (schema.const !== undefined && value !== schema.const) {
    yield { path, message: `Expected ${JSON.stringify(schema.const)}`, value };
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    yield { path, message: `Expected one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`, value };
    return;
  }
  if (schema.anyOf) {
    if (!schema.anyOf.some((s) => errorsOf(s, value, path).next().done)) yield { path, message: "Expected union value", value };
    return;
  }
  if (schema.allOf) {
    for (const s of schema.allOf) yield* errorsOf(s, value, path);
    return;
  }
  const t = schema.type;
  if (t) {
    const actual = typeOf(value);
    const ok = Array.isArray(t)
      ? t.some((x) => x === actual || (x === "integer" && Number.isInteger(value)) || (x === "number" && actual === "number"))
      : t === actual || (t === "integer" && Number.isInteger(value)) || (t === "number" && actual === "number" && t !== "integer");
    if (!ok) {
      yield { path, message: `Expected ${Array.isArray(t) ? t.join(" | ") : t}`, value };
      return;
    }
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength) yield { path, message: `Expected string length >= ${schema.minLength}`, value };
    if (schema.maxLength !== undefined && value.length > schema.maxLength) yield { path, message: `Expected string length <= ${schema.maxLength}`, value };
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) yield { path, message: `Expected string to match ${schema.pattern}`, value };
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) yield { path, message: `Expected number >= ${schema.minimum}`, value };
    if (schema.maximum !== undefined && value > schema.maximum) yield { path, message: `Expected number <= ${schema.maximum}`, value };
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) yield { path, message: `Expected at least ${schema.minItems} items`, value };
    if (schema.maxItems !== undefined && value.length > schema.maxItems) yield { path, message: `Expected at most ${schema.maxItems} items`, value };
    const prefix = schema.prefixItems ?? [];
    for (let i = 0; i < value.length; i++) {
      const s = i < prefix.length ? prefix[i] : schema.items;
      if (s && typeof s === "object") yield* errorsOf(s, value[i], `${path}/${i}`);
    }
  }
  if (typeOf(value) === "object") {
    for (const k of schema.required ?? []) {
      if (!(k in value)) yield { path: `${path}/${k}`, message: "Expected required property", value: undefined };
    }
    for (const [k, v] of Object.entries(value)) {
      const s = schema.properties?.[k];
      if (s) yield* errorsOf(s, v, `${path}/${k}`);
      else if (schema.additionalProperties === false) yield { path: `${path}/${k}`, message: "Unexpected property", value: v };
      else if (typeof schema.additionalProperties === "object") yield* errorsOf(schema.additionalProperties, v, `${path}/${k}`);
    }
  }
}

function convert(schema, value) {
  if (!schema || value === undefined || value === null) return value;
  const t = schema.type;
  if ((t === "number" || t === "integer") && typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  if (t === "boolean" && (value === "true" || value === "false")) return value === "true";
  if (t === "string" && (typeof value === "number" || typeof value === "boolean")) return String(value);
  if (t === "array" && Array.isArray(value) && schema.items) return value.map((v) => convert(schema.items, v));
  if (t === "object" && typeOf(value) === "object" && schema.properties) {
    const out = { ...value };
    for (const [k, s] of Object.entries(schema.properties)) if (k in out) out[k] = convert(s, out[k]);
    return out;
  }
  return value;
}

function withDefaults(schema, value) {
  if (value === undefined && schema?.default !== undefined) return structuredClone(schema.default);
  if (schema?.type === "object" && typeOf(value) === "object" && schema.properties) {
    const out = { ...value };
    for (const [k, s] of Object.entries(schema.properties)) {
      const v = withDefaults(s, out[k]);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  return value;
}

// TypeBox's `Value.Check(schema, value)` and `Value.Check(schema, references, value)`.
const lastArg = (args) => args[args.length - 1];
export const Value = {
  Check: (schema, ...rest) => errorsOf(schema, lastArg(rest)).next().done,
  Errors: (schema, ...rest) => {
    const list = [...errorsOf(schema, lastArg(rest))];
    return Object.assign(list, { First: () => list[0] });
  },
  Convert: (schema, ...rest) => convert(schema, lastArg(rest)),
  Default: (schema, ...rest) => withDefaults(schema, lastArg(rest)),
  Clean: (_schema, ...rest) => lastArg(rest),
  Clone: (v) => structuredClone(v),
  Cast: (schema, ...rest) => withDefaults(schema, convert(schema, lastArg(rest))),
  Create: (schema) => withDefaults(schema, schema.type === "object" ? {} : undefined),
  Equal: (a, b) => JSON.stringify(a) === JSON.stringify(b),
  Hash: (v) => JSON.stringify(v),
  Parse: (schema, ...rest) => {
    const value = withDefaults(schema, convert(schema, lastArg(rest)));
    const first = errorsOf(schema, value).next();
    if (!first.done) throw new Error(`${first.value.path || "/"}: ${first.value.message}`);
    return value;
  },
  Decode: (schema, ...rest) => Value.Parse(schema, ...rest),
  Encode: (_schema, ...rest) => lastArg(rest),
};
export const Check = Value.Check;
export const Errors = Value.Errors;
export const Convert = Value.Convert;
export const Default = Value.Default;
export const Clean = Value.Clean;
export const Parse = Value.Parse;
export const Cast = Value.Cast;

/** `Compile(schema)` / `TypeCompiler.Compile(schema)`: a checker object. */
export function Compile(schema) {
  return {
    Check: (value) => Value.Check(schema, value),
    Errors: (value) => Value.Errors(schema, value),
    Parse: (value) => Value.Parse(schema, value),
    Decode: (value) => Value.Parse(schema, value),
    Encode: (value) => value,
    Code: () => "",
    Schema: () => schema,
  };
}
export const TypeCompiler = { Compile, Code: () => "" };
export const FormatRegistry = { Set() {}, Has: () => false, Get() {}, Delete() {}, Clear() {}, Entries: () => new Map() };
export const TypeRegistry = FormatRegistry;
export const Format = FormatRegistry;
export const TypeGuard = {
  IsSchema: (v) => v !== null && typeof v === "object",
  IsObject: (v) => v?.type === "object",
  IsString: (v) => v?.type === "string",
  IsOptional: (v) => isOptional(v),
};
export const KindGuard = TypeGuard;
export const IsSchema = TypeGuard.IsSchema;
export const StringEnum = (values, o) => make("Unsafe", { type: "string", enum: [...values] }, o);
export default Type;
