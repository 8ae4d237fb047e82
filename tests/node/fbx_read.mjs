// assimp (the Open Asset Import Library, as WebAssembly) reads an FBX file: its node tree and its
// animations, printed as assimp's own JSON (an FBX reader that is not Blender's own).
//
//   node fbx_read.mjs FILE.fbx  ->  {"rootnode": {...}, "animations": [...], ...}
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";

const ajs = await createRequire(import.meta.url)("assimpjs")();
const source = process.argv[2];
const files = new ajs.FileList();
files.AddFile(path.basename(source), new Uint8Array(await readFile(source)));
const result = ajs.ConvertFileList(files, "assjson");
if (!result.IsSuccess() || result.FileCount() === 0) {
    process.stderr.write(`assimp could not read ${source}: ${result.GetErrorCode()}\n`);
    process.exit(1);
}
process.stdout.write(new TextDecoder().decode(result.GetFile(0).GetContent()));
