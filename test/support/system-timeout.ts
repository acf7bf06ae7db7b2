/**
 * Runs before each `system` file (jest `setupFilesAfterEnv`): a test without a timeout of its own gets
 * 3 minutes instead of the run's 120 s (jest.config.js). These tests build packages, compile with tsc and start
 * processes; on a machine whose cores are busy with other work that takes longer, and a timeout there
 * says nothing about the code. Tests that set their own timeout keep it.
 */
jest.setTimeout(180_000);

export {};
