// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import layerOrder from './eslint-rules/layer-order.mjs';
import noInheritedLookup from './eslint-rules/no-inherited-lookup.mjs';
import noClosureAssignedToProperty from './eslint-rules/no-closure-assigned-to-property.mjs';

export default tseslint.config(
  {
    ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'eslint.config.mjs', 'eslint-rules/**'],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: {
      local: {
        rules: {
          'no-inherited-lookup': noInheritedLookup,
          'layer-order': layerOrder,
          'no-closure-assigned-to-property': noClosureAssignedToProperty,
        },
      },
    },
    rules: {
      'local/no-inherited-lookup': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      // Optional members are narrowed by type guards (e.g. the serving path's providers).
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    // The layer order of src/ (eslint-rules/layers.mjs, docs/architecture.md#layers). Specs
    // test a folder from outside and may reach above it; src/testing is their kit.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    rules: { 'local/layer-order': 'error', 'local/no-closure-assigned-to-property': 'error' },
  },
  {
    // Tests poke at loosely typed SDK results and fake servers; keep them readable.
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Tests build their own inputs; the rule guards what the gateway receives.
      'local/no-inherited-lookup': 'off',
      // A test's `!` states what it just checked.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
