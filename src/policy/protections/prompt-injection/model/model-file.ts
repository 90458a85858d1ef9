import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DENSE_FEATURES, DENSE_INDEX } from './analysis';
import type { LinearParams } from './linear';

/**
 * The trained classifier's weights file: `PIJM`, a little-endian u32 header length, a JSON
 * header (geometry, bias, scale, calibration, dense weights by name), then 2^bits int8
 * n-gram weights. Written by scripts/train-injection.ts; the gateway only reads it.
 */

export const MODEL_MAGIC = 'PIJM';
export const MODEL_FORMAT_VERSION = 1;
/** Where the weights live, relative to the repository root (found from src/ or dist/). */
export const MODEL_RELATIVE_PATH = join('models', 'prompt-injection', 'injection-model.bin');

/** The JSON header of the weights file. */
export interface ModelHeader {
  version: number;
  bits: number;
  window: number;
  stride: number;
  bias: number;
  /** n-gram weight = int8 value x scale. */
  scale: number;
  dense: Record<string, number>;
  /**
   * score = sigmoid(slope x (logit - threshold)): `slope` is fitted (Platt) on scores of
   * sources the model did not train on; `threshold` is the logit at the default operating
   * point, so a score of 0.5 is that point.
   */
  calibration: { slope: number; threshold: number };
}

/** A loaded model: scoring parameters plus its calibration. */
export interface InjectionModel extends LinearParams {
  calibration: { slope: number; threshold: number };
  /** Bytes held by the weights. */
  bytes: number;
}

/** The weights file is missing, truncated or of another format. */
export class InjectionModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InjectionModelError';
  }
}

/** Serializes a model (used by the trainer). */
export function encodeModel(header: ModelHeader, grams: Int8Array): Buffer {
  if (grams.length !== 2 ** header.bits) {
    throw new InjectionModelError(`expected 2^${header.bits} n-gram weights, got ${grams.length}`);
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(8);
  head.write(MODEL_MAGIC, 0, 'latin1');
  head.writeUInt32LE(json.length, 4);
  return Buffer.concat([head, json, Buffer.from(grams.buffer, grams.byteOffset, grams.length)]);
}

function isHeader(h: unknown): h is ModelHeader {
  const o = h as Partial<ModelHeader> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    o.version === MODEL_FORMAT_VERSION &&
    typeof o.bits === 'number' &&
    o.bits >= 10 &&
    o.bits <= 26 &&
    typeof o.window === 'number' &&
    typeof o.stride === 'number' &&
    o.stride > 0 &&
    typeof o.bias === 'number' &&
    typeof o.scale === 'number' &&
    typeof o.dense === 'object' &&
    typeof o.calibration?.slope === 'number' &&
    typeof o.calibration.threshold === 'number'
  );
}

/** Parses a weights file; throws InjectionModelError when it is not one. */
export function decodeModel(buf: Buffer): InjectionModel {
  if (buf.length < 8 || buf.toString('latin1', 0, 4) !== MODEL_MAGIC) {
    throw new InjectionModelError('not a prompt-injection model file (bad magic)');
  }
  const jsonLength = buf.readUInt32LE(4);
  let header: unknown;
  try {
    header = JSON.parse(buf.toString('utf8', 8, 8 + jsonLength));
  } catch {
    throw new InjectionModelError('model header is not valid JSON');
  }
  if (!isHeader(header)) {
    throw new InjectionModelError(
      `unsupported model header (format version ${MODEL_FORMAT_VERSION} expected)`,
    );
  }
  const size = 2 ** header.bits;
  const offset = 8 + jsonLength;
  if (buf.length !== offset + size) {
    throw new InjectionModelError(`model file is ${buf.length} bytes, expected ${offset + size}`);
  }
  // A copy: the file buffer may be a slice of Node's shared pool.
  const grams = new Int8Array(size);
  grams.set(new Int8Array(buf.buffer, buf.byteOffset + offset, size));
  const dense = new Float64Array(DENSE_FEATURES.length);
  for (const [name, weight] of Object.entries(header.dense)) {
    const i = DENSE_INDEX.get(name as never);
    if (i !== undefined && typeof weight === 'number') {
      dense[i] = weight;
    }
  }
  return {
    bits: header.bits,
    window: header.window,
    stride: header.stride,
    bias: header.bias,
    scale: header.scale,
    grams,
    dense,
    calibration: header.calibration,
    bytes: size + dense.byteLength,
  };
}

/** The committed weights file: searched upward from this folder (works from src/ and dist/). */
export function findModelFile(from: string = __dirname): string {
  let dir = from;
  for (let i = 0; i < 8; i += 1) {
    const candidate = join(dir, MODEL_RELATIVE_PATH);
    if (existsSync(candidate)) {
      return candidate;
    }
    const up = dirname(dir);
    if (up === dir) {
      break;
    }
    dir = up;
  }
  throw new InjectionModelError(`${MODEL_RELATIVE_PATH} not found above ${from}`);
}

/** Reads and parses a weights file. */
export function loadModel(path: string = findModelFile()): InjectionModel {
  return decodeModel(readFileSync(path));
}
