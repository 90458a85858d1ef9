import type { ProviderKinds } from '../catalog/provider-kind';
import { ANTHROPIC } from '../upstream/providers/anthropic/anthropic.provider';
import { LOCAL } from '../upstream/providers/local/local.provider';
import { OPENAI, OPENAI_COMPATIBLE } from '../upstream/providers/openai/openai.provider';

/** Every registered provider kind, as the catalog sees them at boot (for specs). */
export const PROVIDER_KINDS: ProviderKinds = new Map(
  [OPENAI, OPENAI_COMPATIBLE, ANTHROPIC, LOCAL].map((d) => [d.kind, d]),
);
