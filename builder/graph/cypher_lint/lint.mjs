// Lints Cypher texts with Neo4j's own front end (@neo4j-cypher/language-support).
//
// stdin:  JSON list of {name, query, params: [names], schema?: {labels, relationshipTypes, propertyKeys}}
// stdout: JSON object {name: [{severity, message, line, column}]}, lines and columns 1-based,
//         in the order the queries were given.
import { lintCypherQuery } from '@neo4j-cypher/language-support';

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (chunk) => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

function dbSchemaFor(item) {
  // Only declared parameters count as defined: the linter reports every other `$name`.
  const parameters = Object.fromEntries((item.params ?? []).map((name) => [name, true]));
  const schema = { parameters };
  if (item.schema) {
    // Declaring labels and properties turns misspellings into warnings.
    schema.labels = item.schema.labels ?? [];
    schema.relationshipTypes = item.schema.relationshipTypes ?? [];
    schema.propertyKeys = item.schema.propertyKeys ?? [];
  }
  return schema;
}

function lintOne(item) {
  const { diagnostics } = lintCypherQuery(item.query, dbSchemaFor(item), {
    consoleCommandsEnabled: false,
  });
  return diagnostics.map((d) => ({
    severity: SEVERITY[d.severity] ?? 'error',
    message: d.message,
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
  }));
}

const items = JSON.parse(await readStdin());
const result = {};
for (const item of items) {
  result[item.name] = lintOne(item);
}
process.stdout.write(JSON.stringify(result));
