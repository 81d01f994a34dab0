/**
 * A pi TypeScript extension, written against pi's ExtensionAPI exactly as for the TypeScript
 * pi: a `hello` tool (TypeBox parameters) and a `/hello` command. pi runs it through its
 * Node.js bridge (Node >= 22.6, or the jiti package on older Node).
 */
import { Type } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

interface HelloParams {
	name: string;
}

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "hello",
		label: "Hello",
		description: "A simple greeting tool",
		parameters: Type.Object({
			name: Type.String({ description: "Name to greet" }),
		}),
		async execute(_toolCallId: string, params: HelloParams) {
			return {
				content: [{ type: "text", text: `Hello, ${params.name}!` }],
				details: { greeted: params.name },
			};
		},
	});

	pi.registerCommand("hello", {
		description: "Ask the agent to say hello",
		handler: async (args: string) => {
			pi.sendUserMessage(`Say hello to ${args || "the world"}`);
		},
	});
}
