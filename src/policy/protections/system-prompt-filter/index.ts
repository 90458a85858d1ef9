export {
  SYSTEM_PROMPT_FILTER_TOOL,
  type FilterAction,
  type FilterSettings,
  defaultFilterSettings,
  parseFilterSettings,
} from './settings';
export { takeSecrets } from './secrets';
export {
  type CompiledSecrets,
  type LeakInfo,
  type MatchResult,
  compileSecrets,
  LeakMatcher,
} from './leak-matcher';
export {
  type FilterHooks,
  type LeakChannel,
  type LeakReport,
  systemPromptFilter,
} from './system-prompt-filter.operator';
