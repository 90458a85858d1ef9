export {
  SYSTEM_PROMPT_FILTER_TOOL,
  type FilterAction,
  type FilterSettings,
  defaultFilterSettings,
  parseFilterSettings,
} from './settings';
export { takeSecrets } from './secrets';
export { type CompiledSecrets, compileSecrets } from './compiled-secrets';
export { type LeakInfo, type MatchResult, LeakMatcher } from './leak-matcher';
export {
  type FilterHooks,
  type LeakChannel,
  type LeakReport,
  systemPromptFilter,
} from './system-prompt-filter.operator';
