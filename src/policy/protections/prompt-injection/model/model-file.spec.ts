import {
  decodeModel,
  encodeModel,
  findModelFile,
  InjectionModelError,
  loadModel,
  MODEL_FORMAT_VERSION,
  type ModelHeader,
} from './model-file';

const header: ModelHeader = {
  version: MODEL_FORMAT_VERSION,
  bits: 10,
  window: 512,
  stride: 128,
  bias: -1.5,
  scale: 0.01,
  dense: { instruction_override: 1.25, no_such_signal: 9 },
  calibration: { slope: 0.5, threshold: 1.75 },
};

describe('model file', () => {
  it('round-trips the header and the int8 weights', () => {
    const grams = new Int8Array(1024).map((_, i) => (i % 255) - 127);
    const model = decodeModel(encodeModel(header, grams));
    expect(model).toMatchObject({ bits: 10, window: 512, stride: 128, bias: -1.5, scale: 0.01 });
    expect(model.calibration).toEqual({ slope: 0.5, threshold: 1.75 });
    expect(Array.from(model.grams)).toEqual(Array.from(grams));
    // Known dense features by name; unknown names are ignored.
    expect(Math.max(...Array.from(model.dense))).toBe(1.25);
  });

  it('rejects a file of another format, a truncated one and an unsupported version', () => {
    const good = encodeModel(header, new Int8Array(1024));
    expect(() => decodeModel(Buffer.from('nope'))).toThrow(InjectionModelError);
    expect(() => decodeModel(good.subarray(0, good.length - 1))).toThrow(/bytes, expected/);
    const future = encodeModel(
      { ...header, version: MODEL_FORMAT_VERSION + 1 },
      new Int8Array(1024),
    );
    expect(() => decodeModel(future)).toThrow(/unsupported model header/);
    expect(() => encodeModel(header, new Int8Array(10))).toThrow(InjectionModelError);
  });

  it('finds and loads the committed weights from the source tree', () => {
    const model = loadModel(findModelFile());
    expect(model.grams.length).toBe(2 ** model.bits);
    expect(model.calibration.slope).toBeGreaterThan(0);
    // A few MB: the README states the memory the weights take.
    expect(model.bytes).toBeLessThan(32 * 1024 * 1024);
  });

  it('says where it looked when the weights are missing', () => {
    expect(() => findModelFile('/')).toThrow(InjectionModelError);
  });
});
