// The rank files are resolved through package `exports`, which this project's
// `moduleResolution: node` does not read for types; declare the two we load.
declare module 'js-tiktoken/ranks/o200k_base' {
  import type { TiktokenBPE } from 'js-tiktoken/lite';
  const ranks: TiktokenBPE;
  export default ranks;
}

declare module 'js-tiktoken/ranks/cl100k_base' {
  import type { TiktokenBPE } from 'js-tiktoken/lite';
  const ranks: TiktokenBPE;
  export default ranks;
}
