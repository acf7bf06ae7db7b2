import { DataSource } from 'typeorm';
import { RetentionProcessor, RETENTION_BATCH_SIZE } from '../../src/retention/retention.processor';
import { startTestApp, TestApp } from '../support/test-app';

/** Data retention (docs/durability.md#data-retention): rows past their retention are deleted in bounded batches by the retention job. */
describe('retention job', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_DELAYS: '3600' } });
    db = t.get(DataSource);
  });
  afterAll(() => t.close());

  it('deletes deliveries older than 30 days, keeps younger ones', async () => {
    const { key } = await t.createKey();
    const endpoint = await t.request('POST', '/v1/webhooks', { key, body: { url: 'http://127.0.0.1:9/hook' } });
    expect(endpoint.status).toBe(201);
    const old = await t.request('POST', `/v1/webhooks/${endpoint.body.id}/test`, { key });
    const recent = await t.request('POST', `/v1/webhooks/${endpoint.body.id}/test`, { key });
    await db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE id = $1`, [old.body.deliveryId]);
    await db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '29 days' WHERE id = $1`, [recent.body.deliveryId]);

    const result = await t.get(RetentionProcessor).run();
    expect(result.webhookDeliveries).toBe(1);
    const left = await db.query(`SELECT id FROM webhook_deliveries WHERE id = ANY($1)`, [[old.body.deliveryId, recent.body.deliveryId]]);
    expect(left.map((r: { id: string }) => r.id)).toEqual([recent.body.deliveryId]);
  });

  it('keeps usage rows of the last 13 months (the current one included) and deletes older ones, in batches', async () => {
    const { keyId } = await t.createKey();
    const monthsAgo = (n: number) => {
      const now = new Date();
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 1)).toISOString().slice(0, 10);
    };
    const kept = [0, 1, 12].map(monthsAgo);
    const dropped = [13, 24].map(monthsAgo);
    for (const month of [...kept, ...dropped]) {
      await db.query(`INSERT INTO quota_usage (api_key_id, month, used) VALUES ($1, $2, 5)`, [keyId, month]);
    }
    // More expired rows than one batch, to exercise the batching.
    const { keyId: other } = await t.createKey();
    await db.query(
      `INSERT INTO quota_usage (api_key_id, month, used)
       SELECT $1, (date '1990-01-01' - make_interval(months => g))::date, 1 FROM generate_series(0, $2) AS g`,
      [other, RETENTION_BATCH_SIZE + 10],
    );

    const result = await t.get(RetentionProcessor).run();
    expect(result.usageRows).toBeGreaterThanOrEqual(dropped.length + RETENTION_BATCH_SIZE + 11);
    const months = await db.query(`SELECT to_char(month, 'YYYY-MM-DD') AS month FROM quota_usage WHERE api_key_id = $1 ORDER BY month`, [
      keyId,
    ]);
    expect(months.map((r: { month: string }) => r.month)).toEqual([...kept].sort());
    expect(await db.query(`SELECT 1 FROM quota_usage WHERE api_key_id = $1`, [other])).toHaveLength(0);
  });

  it("deletes render links' single-flight slots older than a day unless their job is still open", async () => {
    const { key, accountId } = await t.createKey();
    const open = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/open' } });
    expect(open.status).toBe(202);
    const slot = (name: string, jobId: string, age: string) =>
      db.query(`INSERT INTO render_flights (account_id, cache_key, job_id, created_at) VALUES ($1, $2, $3, now() - $4::interval)`, [
        accountId,
        name,
        jobId,
        age,
      ]);
    await slot('ended-old', 'scr_000000000000000000000001', '25 hours');
    await slot('open-old', open.body.id, '25 hours');
    await slot('ended-recent', 'scr_000000000000000000000002', '23 hours');

    const result = await t.get(RetentionProcessor).run();
    expect(result.renderFlights).toBe(1);
    const left = await db.query(`SELECT cache_key FROM render_flights WHERE account_id = $1 ORDER BY cache_key`, [accountId]);
    expect(left.map((r: { cache_key: string }) => r.cache_key)).toEqual(['ended-recent', 'open-old']);
  });
});
