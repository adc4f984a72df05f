// The official TypeScript SDK's client over streamable HTTP: remembers a fact in one connection and finds it
// in another, as a TypeScript agent would. Usage: node remember_and_recall.mjs URL TOKEN FACT QUESTION
// Prints one JSON line: the tools listed, what remember returned, what the search found.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, fact, question] = process.argv.slice(2);

async function connected() {
  const client = new Client({ name: "ts-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

const first = await connected();
const tools = (await first.listTools()).tools.map((t) => t.name);
const kept = await first.callTool({ name: "remember", arguments: { text: fact, namespace: ["ts"] } });
await first.close();

const second = await connected();
const found = await second.callTool({ name: "search_memories", arguments: { query: question } });
const refused = await second.callTool({ name: "read_transcript", arguments: { session_id: "no-such-session" } });
await second.close();

console.log(JSON.stringify({ tools, kept: kept.structuredContent, found: found.structuredContent,
  refused: { isError: refused.isError, text: refused.content[0].text } }));
