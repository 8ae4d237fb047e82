// three.js plays each animation of a .glb in Node: GLTFLoader parses it, an AnimationMixer
// plays each clip alone from the rest pose, and every joint's world matrix is read at each
// time asked. Images are left out (three.js loads them through the DOM, which Node lacks);
// nothing else is changed.
//
// Joints are named as the file names them (three.js keeps that name in userData.name).
//
//   node play.mjs FILE.glb FPS [--skin]  ->  {"joints": [...], "rest": {joint: matrix}, "clips": {name:
//   {"duration": s, "frames": [{joint: matrix}]}}}, matrices as three.js's 16 column-major values,
//   one frame every 1/FPS s from 0 to the clip's duration. With --skin, each frame (and the rest)
//   also holds "#skins": {mesh: [x, y, z, x, y, z...]}, every vertex skinned, in world space.
import { readFile } from "node:fs/promises";
import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";

function withoutImages(bytes) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const jsonLength = view.getUint32(12, true);
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + jsonLength)));
    if (!json.images) return bytes.slice().buffer;
    delete json.images; delete json.textures; delete json.samplers;
    const strip = (value) => {
        if (value && typeof value === "object") {
            for (const key of Object.keys(value)) {
                if (key.endsWith("Texture")) delete value[key]; else strip(value[key]);
            }
        }
    };
    strip(json.materials);
    let text = new TextEncoder().encode(JSON.stringify(json));
    const padded = new Uint8Array(Math.ceil(text.length / 4) * 4).fill(0x20);
    padded.set(text);
    text = padded;
    const rest = bytes.subarray(20 + jsonLength);
    const out = new Uint8Array(20 + text.length + rest.length);
    out.set(bytes.subarray(0, 12));
    const outView = new DataView(out.buffer);
    outView.setUint32(8, out.length, true);
    outView.setUint32(12, text.length, true);
    outView.setUint32(16, 0x4e4f534a, true);
    out.set(text, 20);
    out.set(rest, 20 + text.length);
    return out.buffer;
}

const [file, fpsText, skinFlag] = process.argv.slice(2);
// With --skin, each skinned mesh's vertices too, in world space, as three.js skins them.
const skins = [];
const fps = Number(fpsText);
const data = withoutImages(new Uint8Array(await readFile(file)));
const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(data, "", resolve, reject));
const root = gltf.scene;
const joints = [];
root.traverse((node) => { if (node.isSkinnedMesh) for (const bone of node.skeleton.bones) joints.push(bone); });
// A skeleton without a mesh: the nodes that are bones, or (assimp's, without a skin) every named one.
if (!joints.length) root.traverse((node) => { if (node.isBone) joints.push(node); });
if (!joints.length) root.traverse((node) => { if (node.userData.name) joints.push(node); });
const unique = [...new Set(joints)];
const saved = new Map();
root.traverse((node) => saved.set(node, [node.position.clone(), node.quaternion.clone(), node.scale.clone()]));
const restore = () => { for (const [node, [p, q, s]] of saved) { node.position.copy(p); node.quaternion.copy(q); node.scale.copy(s); } };
if (skinFlag === "--skin") root.traverse((node) => { if (node.isSkinnedMesh) skins.push(node); });
const vertices = (mesh) => {
    const point = new THREE.Vector3();
    const flat = [];
    for (let index = 0; index < mesh.geometry.attributes.position.count; index++) {
        mesh.getVertexPosition(index, point);
        point.applyMatrix4(mesh.matrixWorld);
        flat.push(point.x, point.y, point.z);
    }
    return flat;
};
const readSkins = () => Object.fromEntries(skins.map((mesh) => { mesh.skeleton.update(); return [mesh.userData.name ?? mesh.name, vertices(mesh)]; }));
const readJoints = () => { root.updateMatrixWorld(true); return Object.fromEntries(unique.map((bone) => [bone.userData.name ?? bone.name, bone.matrixWorld.toArray()])); };
const read = () => { const joints = readJoints(); if (skins.length) joints["#skins"] = readSkins(); return joints; };
const out = { joints: unique.map((bone) => bone.userData.name ?? bone.name), rest: read(), clips: {} };
for (const clip of gltf.animations) {
    restore();
    const mixer = new THREE.AnimationMixer(root);
    const action = mixer.clipAction(clip);
    action.setLoop(THREE.LoopOnce, 1);
    action.clampWhenFinished = true;
    action.play();
    const count = Math.round(clip.duration * fps) + 1;
    const frames = [];
    for (let index = 0; index < count; index++) {
        mixer.setTime(Math.min(index / fps, clip.duration));
        frames.push(read());
    }
    out.clips[clip.name] = { duration: clip.duration, frames };
    mixer.stopAllAction();
    mixer.uncacheRoot(root);
}
process.stdout.write(JSON.stringify(out));
