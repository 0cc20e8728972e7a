// Parse and validate an AsyncAPI document with the official parser (@asyncapi/parser), resolving
// its relative $refs (the JSON Schemas under schemas/json). Prints every diagnostic; exits 1 when
// any is an error (severity 0), so warnings and hints never pass silently either.
//
//   node dev/contracts/validate-asyncapi.mjs topics/asyncapi.json
import { Parser, fromFile } from '@asyncapi/parser';

const SEVERITY = ['error', 'warning', 'info', 'hint'];
const file = process.argv[2];
if (!file) {
  console.error('usage: validate-asyncapi.mjs FILE');
  process.exit(2);
}
const { document, diagnostics } = await fromFile(new Parser(), file).parse();
for (const d of diagnostics) {
  console.log(`${file}: ${SEVERITY[d.severity]} ${d.code} at ${d.path.join('.') || '/'}: ${d.message}`);
}
const errors = diagnostics.filter((d) => d.severity === 0).length;
if (errors > 0 || !document) {
  console.log(`${file}: ${errors} error(s)`);
  process.exit(1);
}
const channels = document.channels().length;
const messages = document.components().messages().length;
console.log(`${file}: valid AsyncAPI ${document.version()} (${channels} channels, ${messages} messages)`);
