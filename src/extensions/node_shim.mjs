// Stand-ins for the runtime parts of pi's packages that extensions import
// (@mariozechner/pi-coding-agent, @mariozechner/pi-ai, typebox): a TypeBox-compatible `Type`
// builder producing plain JSON Schema, `StringEnum`, and `defineTool`. Written next to
// pi's Node.js bridge; import aliases point here.
const withOpts = (schema, opts) => ({ ...schema, ...(opts ?? {}) });
const OPTIONAL = Symbol.for("pi.optional");

export const Type = {
  String: (o) => withOpts({ type: "string" }, o),
  Number: (o) => withOpts({ type: "number" }, o),
  Integer: (o) => withOpts({ type: "integer" }, o),
  Boolean: (o) => withOpts({ type: "boolean" }, o),
  Null: (o) => withOpts({ type: "null" }, o),
  Any: (o) => withOpts({}, o),
  Unknown: (o) => withOpts({}, o),
  Literal: (value, o) => withOpts({ const: value, type: typeof value }, o),
  Array: (items, o) => withOpts({ type: "array", items }, o),
  Union: (anyOf, o) => withOpts({ anyOf }, o),
  Enum: (e, o) => withOpts({ enum: Object.values(e) }, o),
  Record: (_k, v, o) => withOpts({ type: "object", additionalProperties: v }, o),
  Optional: (schema) => ({ ...schema, [OPTIONAL]: true }),
  Object: (properties, o) => {
    const required = Object.keys(properties).filter((k) => !properties[k][OPTIONAL]);
    const props = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, { ...v }]));
    return withOpts({ type: "object", properties: props, ...(required.length ? { required } : {}) }, o);
  },
};

export const StringEnum = (values, o) => withOpts({ type: "string", enum: [...values] }, o);
export const defineTool = (tool) => tool;
export default { Type, StringEnum, defineTool };
