/** Two projects: pure unit tests next to the code, end-to-end tests against real PostgreSQL, Redis and Chromium. */
const common = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  testEnvironment: 'node',
};
module.exports = {
  testTimeout: 60000,
  projects: [
    // Unit tests of the service (src/) and of the SDK (openapi/sdk-typescript/src).
    { ...common, displayName: 'unit', rootDir: '.', roots: ['<rootDir>/src', '<rootDir>/openapi'], testRegex: '.*\\.spec\\.ts$' },
    {
      ...common,
      displayName: 'e2e',
      rootDir: '.',
      testRegex: 'test/.*\\.e2e-spec\\.ts$',
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      // Each file starts with empty tables (the files share the run's database, one after another).
      setupFilesAfterEnv: ['<rootDir>/test/support/fresh-state.ts'],
    },
  ],
};
