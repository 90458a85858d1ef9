/** Unit specs live beside the code, e2e suites under test/. `npm test` runs both. */
const os = require('node:os');
const transform = { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] };
module.exports = {
  testTimeout: 20000,
  // Most e2e time is spent waiting on sockets, timers and databases, not on the CPU: one
  // worker more than the cores (jest's default is one fewer) overlaps those waits. A number,
  // not '150%': in a config file jest reads that string as 150 workers.
  // JEST_MAX_WORKERS overrides it (e.g. 1 to debug a suite in band).
  maxWorkers: Number(process.env.JEST_MAX_WORKERS) || os.availableParallelism() + 1,
  projects: [
    {
      displayName: 'unit',
      rootDir: 'src',
      testRegex: '.*\\.spec\\.ts$',
      moduleFileExtensions: ['js', 'json', 'ts'],
      transform,
      testEnvironment: 'node',
    },
    {
      displayName: 'e2e',
      rootDir: '.',
      roots: ['<rootDir>/test'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      testRegex: '.*\\.e2e-spec\\.ts$',
      moduleFileExtensions: ['js', 'json', 'ts'],
      transform,
      testEnvironment: 'node',
    },
  ],
};
