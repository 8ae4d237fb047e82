// Khronos' glTF Validator on one file (.glb, or .gltf with its resources beside it).
// Prints the validator's report as JSON; exits 1 when it holds an error.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";

const validator = createRequire(import.meta.url)("gltf-validator");
const file = path.resolve(process.argv[2]);
const report = await validator.validateBytes(new Uint8Array(await readFile(file)), {
    uri: path.basename(file),
    maxIssues: 0,
    externalResourceFunction: async (uri) =>
        new Uint8Array(await readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)))),
});
process.stdout.write(JSON.stringify(report));
process.exit(report.issues.numErrors > 0 ? 1 : 0);
