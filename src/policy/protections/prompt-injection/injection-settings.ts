import { own } from '../../../common/own';
import {
  choiceSetting,
  invalidSetting,
  numberSetting,
  readSettings,
  stringSetting,
} from '../protection-settings';
import type { PartSource } from './detector';

export type InjectionAction = 'block' | 'flag';

export interface InjectionSettings {
  action: InjectionAction;
  threshold: number;
  /** Which part sources are scanned. */
  sources: PartSource[];
  /** Catalog model asked when the local score is uncertain (the second stage). */
  detectorModel?: string;
  detectorModelParam?: string;
  /** Name of the detector backend (backends/): `local`, `http`, `judge`... */
  detector: string;
  /** Path of the `detector` setting when the request named one (for its 400). */
  detectorParam?: string;
  /** A remote backend that fails: `open` lets the local model decide, `closed` is a 503. */
  failMode: 'open' | 'closed';
  /** Deadline of a remote backend's calls for the request. */
  timeoutMs: number;
}

/** The operator's defaults for the detector backends (PROMPT_INJECTION_DETECTOR...). */
export interface BackendDefaults {
  detector: string;
  failMode: 'open' | 'closed';
  timeoutMs: number;
}

export const BUILT_IN_BACKEND: BackendDefaults = {
  detector: 'local',
  failMode: 'open',
  timeoutMs: 2000,
};

const SCAN_VALUES: Record<string, PartSource> = {
  user: 'user',
  tool_results: 'tool_result',
  documents: 'document',
};
const SETTINGS = [
  'action',
  'threshold',
  'scan',
  'detector_model',
  'detector',
  'fail_mode',
  'timeout_ms',
] as const;

export function defaultInjectionSettings(
  threshold: number,
  detectorModel?: string,
  backend: BackendDefaults = BUILT_IN_BACKEND,
): InjectionSettings {
  return {
    action: 'block',
    threshold,
    sources: ['user', 'tool_result', 'document'],
    detectorModel,
    detector: backend.detector,
    failMode: backend.failMode,
    timeoutMs: backend.timeoutMs,
  };
}

function parseScan(value: unknown, param: string): PartSource[] {
  const items =
    typeof value === 'string'
      ? value.split(',').map((s) => s.trim())
      : Array.isArray(value)
        ? value
        : undefined;
  const allowed = Object.keys(SCAN_VALUES).join(', ');
  if (items === undefined || items.length === 0) {
    throw invalidSetting(
      param,
      `expected a non-empty array or comma-separated string of ${allowed}.`,
    );
  }
  const sources = new Set<PartSource>();
  for (const item of items) {
    const source = typeof item === 'string' ? own(SCAN_VALUES, item) : undefined;
    if (source === undefined) {
      throw invalidSetting(param, `unknown part ${JSON.stringify(item)}; expected ${allowed}.`);
    }
    sources.add(source);
  }
  return [...sources];
}

/**
 * Reads the settings of a `prompt_injection_protection` tool from its parameter schema:
 * each property's `const` (or else `default`) is the value; a property without either keeps
 * the default. `schemaParam` is the schema's path, used to name a bad setting in the 400.
 */
export function parseInjectionSettings(
  schema: unknown,
  schemaParam: string,
  defaults: InjectionSettings,
): InjectionSettings {
  const settings: InjectionSettings = { ...defaults, sources: [...defaults.sources] };
  const raw = readSettings(schema, schemaParam, 'prompt_injection_protection', SETTINGS);
  const action = raw.get('action');
  if (action) {
    settings.action = choiceSetting(action, ['block', 'flag'] as const);
  }
  const threshold = raw.get('threshold');
  if (threshold) {
    settings.threshold = numberSetting(threshold, 0, 1);
  }
  const scan = raw.get('scan');
  if (scan) {
    settings.sources = parseScan(scan.value, scan.param);
  }
  const detector = raw.get('detector_model');
  if (detector) {
    settings.detectorModel = stringSetting(detector);
    settings.detectorModelParam = detector.param;
  }
  const backend = raw.get('detector');
  if (backend) {
    settings.detector = stringSetting(backend, 64);
    settings.detectorParam = backend.param;
  }
  const failMode = raw.get('fail_mode');
  if (failMode) {
    settings.failMode = choiceSetting(failMode, ['open', 'closed'] as const);
  }
  const timeout = raw.get('timeout_ms');
  if (timeout) {
    settings.timeoutMs = numberSetting(timeout, 50, 60_000, true);
  }
  return settings;
}
