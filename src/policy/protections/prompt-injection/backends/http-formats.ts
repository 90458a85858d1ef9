/**
 * Request and response shapes of the guard-model servers the HTTP backend speaks, as pure
 * functions (no I/O), so each shape is tested on its own:
 *
 * - `tei`: Hugging Face Text Embeddings Inference `POST /predict`, a batch of single
 *   sequences `{"inputs":[["a"],["b"]],"truncate":true}` → one list of `{label, score}` per
 *   input (all labels, probabilities). The injection probability is the sum of the scores of
 *   the labels that mean injection (Prompt Guard 2: MALICIOUS; DeBERTa guards: INJECTION).
 * - `kserve`: KServe / Triton open inference protocol v2 `POST /v2/models/{name}/infer`,
 *   one BYTES input tensor of shape [n] → the first output, shape [n, k] (class k at
 *   `classIndex`; rows that are not probabilities go through softmax) or [n] / [n, 1] (one
 *   score per text; outside 0..1 it is a logit and goes through the sigmoid).
 * - `json`: one `{"text": "..."}` per text → `{"label": "...", "score": 0.97}`; the score
 *   is the probability of that label, so a non-injection label gives 1 − score.
 */

export type HttpFormat = 'tei' | 'kserve' | 'json';

export interface FormatOptions {
  /** Lower-case labels that mean injection. */
  labels: readonly string[];
  classIndex: number;
  inputName: string;
}

/** The answer does not have the shape the format promises. */
export class ResponseShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResponseShapeError';
  }
}

/** Request bodies: one for tei and kserve (the whole batch), one per text for json. */
export function requestBodies(
  format: HttpFormat,
  texts: readonly string[],
  o: FormatOptions,
): unknown[] {
  if (format === 'tei') {
    return [{ inputs: texts.map((t) => [t]), truncate: true }];
  }
  if (format === 'kserve') {
    return [
      { inputs: [{ name: o.inputName, shape: [texts.length], datatype: 'BYTES', data: texts }] },
    ];
  }
  return texts.map((text) => ({ text }));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function probability(x: unknown, what: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) {
    throw new ResponseShapeError(`${what} is not a finite number`);
  }
  return x;
}

function isInjectionLabel(label: unknown, o: FormatOptions): boolean {
  return typeof label === 'string' && o.labels.includes(label.trim().toLowerCase());
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

function teiScores(body: unknown, count: number, o: FormatOptions): number[] {
  if (!Array.isArray(body)) {
    throw new ResponseShapeError('a TEI /predict answer is an array');
  }
  // One input may come back unwrapped (a plain list of {label, score}).
  const rows = count === 1 && body.length > 0 && isRecord(body[0]) ? [body] : body;
  if (rows.length !== count) {
    throw new ResponseShapeError(`expected ${count} predictions, got ${rows.length}`);
  }
  return rows.map((row: unknown, i) => {
    if (!Array.isArray(row) || row.length === 0) {
      throw new ResponseShapeError(`prediction ${i} is not a non-empty list of labels`);
    }
    let sum = 0;
    for (const item of row) {
      if (!isRecord(item)) {
        throw new ResponseShapeError(`prediction ${i} holds a non-object`);
      }
      const score = probability(item.score, `prediction ${i} score`);
      if (isInjectionLabel(item.label, o)) {
        sum += score;
      }
    }
    return clamp01(sum);
  });
}

function softmaxAt(row: readonly number[], index: number): number {
  const isProb =
    row.every((x) => x >= 0 && x <= 1) && Math.abs(row.reduce((s, x) => s + x, 0) - 1) < 1e-3;
  if (isProb) {
    return row[index];
  }
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  return exps[index] / exps.reduce((s, x) => s + x, 0);
}

function kserveScores(body: unknown, count: number, o: FormatOptions): number[] {
  const outputs = isRecord(body) ? body.outputs : undefined;
  const first: unknown = Array.isArray(outputs) ? outputs[0] : undefined;
  if (!isRecord(first) || !Array.isArray(first.data) || !Array.isArray(first.shape)) {
    throw new ResponseShapeError('a KServe v2 answer has outputs[0] with shape and data');
  }
  const data = first.data.map((x, i) => probability(x, `outputs[0].data[${i}]`));
  const shape = first.shape.map((x) => probability(x, 'outputs[0].shape'));
  if (shape[0] !== count) {
    throw new ResponseShapeError(`expected ${count} rows, got shape [${shape.join(', ')}]`);
  }
  const width = shape.length === 1 ? 1 : shape[1];
  if (data.length !== count * width || width < 1) {
    throw new ResponseShapeError(
      `data holds ${data.length} values for shape [${shape.join(', ')}]`,
    );
  }
  if (width === 1) {
    return data.map((x) => (x >= 0 && x <= 1 ? x : sigmoid(x)));
  }
  if (o.classIndex >= width) {
    throw new ResponseShapeError(`class index ${o.classIndex} is beyond ${width} classes`);
  }
  const out: number[] = [];
  for (let i = 0; i < count; i += 1) {
    out.push(softmaxAt(data.slice(i * width, (i + 1) * width), o.classIndex));
  }
  return out;
}

function jsonScore(body: unknown, o: FormatOptions): number {
  if (!isRecord(body) || typeof body.label !== 'string') {
    throw new ResponseShapeError('a JSON classifier answer is {"label": string, "score": number}');
  }
  const score = clamp01(probability(body.score, 'score'));
  return isInjectionLabel(body.label, o) ? score : 1 - score;
}

/**
 * The injection probability of each text from the parsed answers (`bodies[i]` answers
 * `requestBodies(...)[i]`). Throws ResponseShapeError on any other shape.
 */
export function parseScores(
  format: HttpFormat,
  bodies: readonly unknown[],
  count: number,
  o: FormatOptions,
): number[] {
  if (format === 'tei') {
    return teiScores(bodies[0], count, o);
  }
  if (format === 'kserve') {
    return kserveScores(bodies[0], count, o);
  }
  return bodies.map((b) => jsonScore(b, o));
}
