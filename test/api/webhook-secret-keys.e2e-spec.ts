import { createHmac, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { buildAdminProgram } from '../../src/cli/admin-commands';
import { SecretCipher, secretKeyId } from '../../src/common/secret-cipher';
import { startTestApp, TestApp } from '../support/test-app';
import { startWebhookReceiver, verifyDelivery, WebhookReceiver } from '../support/webhook-receiver';

/*
 * Rotating the key that seals webhook signing secrets at rest (docs/webhooks.md#configuration): WEBHOOK_SECRET_KEYS=<new>,<old>
 * opens secrets sealed under either key and seals new ones under the first; `webhook:reseal` moves every
 * stored secret (webhook signing secrets, render-key secrets, destination credentials) to the first key,
 * after which the old key can be dropped. The secrets themselves never change.
 */
describe('webhook secret key rotation', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  let receiver: WebhookReceiver;
  let t: TestApp | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await receiver.close();
  });

  const start = (keys: Record<string, string>) => startTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'true', ...keys } });
  const sealedOf = async (app: TestApp, id: string): Promise<string> =>
    (await app.get(DataSource).query('SELECT secret_sealed FROM webhook_endpoints WHERE id = $1', [id]))[0].secret_sealed;

  async function reseal(app: TestApp): Promise<{ resealed: number; alreadyCurrent: number; unreadable: string[] }> {
    const printed: string[] = [];
    const program = buildAdminProgram(
      async () => app.app,
      () => (obj) => printed.push(JSON.stringify(obj)),
    );
    await program.parseAsync(['node', 'glimpse', 'webhook:reseal', '--json']);
    return JSON.parse(printed[0]);
  }

  async function pingVerifies(app: TestApp, apiKey: string, endpointId: string, route: string, secret: string): Promise<void> {
    const before = receiver.requests(route).length;
    expect((await app.request('POST', `/v1/webhooks/${endpointId}/test`, { key: apiKey })).status).toBe(202);
    const requests = await receiver.waitFor(route, before + 1, 20_000);
    expect(verifyDelivery(requests[before], secret).type).toBe('test.ping');
  }

  it('opens secrets under every listed key, seals under the first, and webhook:reseal moves every old one to it', async () => {
    // 1. Created while only the old key is configured.
    t = await start({ WEBHOOK_SECRET_KEY: oldKey.toString('hex') });
    const { key: apiKey } = await t.createKey();
    const route = receiver.route('rotation', 204);
    const first = (await t.request('POST', '/v1/webhooks', { key: apiKey, body: { url: route } })).body;
    expect(await sealedOf(t, first.id)).toMatch(new RegExp(`^v1\\.${secretKeyId(oldKey)}\\.`));
    // A third endpoint mid-rotation: its previous secret still signs, sealed under the old key too.
    const overlapping = (await t.request('POST', '/v1/webhooks', { key: apiKey, body: { url: receiver.route('overlap', 204) } })).body;
    const rotated = await t.request('POST', `/v1/webhooks/${overlapping.id}/rotate`, { key: apiKey, body: { expiresInSeconds: 3600 } });
    expect(rotated.status).toBe(200);
    // The other sealed secrets: a render key mid-rotation (both secrets) and a destination's credentials.
    const renderKey = (await t.request('POST', '/v1/render-keys', { key: apiKey, body: {} })).body;
    const renderRotated = await t.request('POST', `/v1/render-keys/${renderKey.id}/rotate`, {
      key: apiKey,
      body: { expiresInSeconds: 3600 },
    });
    expect(renderRotated.status).toBe(200);
    const credentials = { accessKeyId: 'AKIAROTATION', secretAccessKey: 'rotation-secret-access-key' };
    const destination = await t.request('POST', '/v1/storage-destinations', {
      key: apiKey,
      body: { type: 's3', bucket: 'rotation', region: 'us-east-1', endpoint: 'http://127.0.0.1:9', forcePathStyle: true, ...credentials },
    });
    expect(destination.status).toBe(201);
    await t.close();

    // 2. New key first, old key still listed: the old secret still signs; new secrets use the new key.
    t = await start({ WEBHOOK_SECRET_KEYS: `${newKey.toString('hex')},${oldKey.toString('base64')}` });
    await pingVerifies(t, apiKey, first.id, 'rotation', first.secret);
    const second = (await t.request('POST', '/v1/webhooks', { key: apiKey, body: { url: route } })).body;
    expect(await sealedOf(t, second.id)).toMatch(new RegExp(`^v1\\.${secretKeyId(newKey)}\\.`));

    // 3. Re-seal: the old row moves to the new key, the new one is left alone; a second run has nothing to do.
    const report = await reseal(t);
    expect(report.resealed).toBeGreaterThanOrEqual(1);
    expect(report.unreadable).not.toContain(first.id);
    expect(report.unreadable).not.toContain(second.id);
    expect(await sealedOf(t, first.id)).toMatch(new RegExp(`^v1\\.${secretKeyId(newKey)}\\.`));
    const [both] = await t
      .get(DataSource)
      .query('SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = $1', [overlapping.id]);
    expect(both.secret_sealed).toMatch(new RegExp(`^v1\\.${secretKeyId(newKey)}\\.`));
    expect(both.previous_secret_sealed).toMatch(new RegExp(`^v1\\.${secretKeyId(newKey)}\\.`));
    const sealedUnderNewKey = new RegExp(`^v1\\.${secretKeyId(newKey)}\\.`);
    const [renderRow] = await t
      .get(DataSource)
      .query('SELECT secret_sealed, previous_secret_sealed FROM render_keys WHERE id = $1', [renderKey.id]);
    expect(renderRow.secret_sealed).toMatch(sealedUnderNewKey);
    expect(renderRow.previous_secret_sealed).toMatch(sealedUnderNewKey);
    const [destinationRow] = await t
      .get(DataSource)
      .query('SELECT credentials_sealed FROM storage_destinations WHERE id = $1', [destination.body.id]);
    expect(destinationRow.credentials_sealed).toMatch(sealedUnderNewKey);
    expect((await reseal(t)).resealed).toBe(0);
    await t.close();

    // 4. The old key dropped: both endpoints still sign with their unchanged secrets.
    t = await start({ WEBHOOK_SECRET_KEY: newKey.toString('hex') });
    await pingVerifies(t, apiKey, first.id, 'rotation', first.secret);
    await pingVerifies(t, apiKey, second.id, 'rotation', second.secret);
    // The overlapping endpoint signs with both of its secrets, each still readable.
    expect((await t.request('POST', `/v1/webhooks/${overlapping.id}/test`, { key: apiKey })).status).toBe(202);
    const [overlapPing] = await receiver.waitFor('overlap', 1, 20_000);
    const timestamp = String(overlapPing.headers['webhook-timestamp']);
    const signature = String(overlapPing.headers['webhook-signature']);
    for (const secret of [rotated.body.secret, overlapping.secret]) {
      expect(signature).toContain(`v1=${createHmac('sha256', secret).update(`${timestamp}.${overlapPing.body}`).digest('hex')}`);
    }
    // The render key's two secrets and the destination's credentials open under the new key alone, unchanged.
    const cipher = t.get(SecretCipher);
    const [renderAfter] = await t
      .get(DataSource)
      .query('SELECT secret_sealed, previous_secret_sealed FROM render_keys WHERE id = $1', [renderKey.id]);
    expect(cipher.open(renderAfter.secret_sealed, renderKey.id)).toBe(renderRotated.body.secret);
    expect(cipher.open(renderAfter.previous_secret_sealed, renderKey.id)).toBe(renderKey.secret);
    const [destinationAfter] = await t
      .get(DataSource)
      .query('SELECT credentials_sealed FROM storage_destinations WHERE id = $1', [destination.body.id]);
    expect(JSON.parse(cipher.open(destinationAfter.credentials_sealed, destination.body.id))).toEqual(credentials);
  });

  it('seals the stored answer of an Idempotency-Key request: the signing secret is not in the database, the replay returns it', async () => {
    await t?.close();
    t = await start({ WEBHOOK_SECRET_KEY: newKey.toString('hex') });
    const { key: apiKey } = await t.createKey();
    const send = () =>
      t!.request('POST', '/v1/webhooks', {
        key: apiKey,
        body: { url: receiver.route('sealed-answer', 204) },
        headers: { 'idempotency-key': 'create-endpoint-0001' },
      });
    const created = await send();
    expect(created.status).toBe(201);
    const [stored] = await t.get(DataSource).query(`SELECT response_body FROM idempotency_keys WHERE "key" = 'create-endpoint-0001'`);
    expect(stored.response_body).toMatch(new RegExp(`^v1\\.${secretKeyId(newKey)}\\.`));
    expect(stored.response_body).not.toContain(created.body.secret);

    const replay = await send();
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(created.body);

    // Another scope cannot open it: the sealed answer moved to another key's row does not replay.
    const other = await t.createKey();
    const theirs = await t.request('POST', '/v1/webhooks', {
      key: other.key,
      body: { url: receiver.route('sealed-other', 204) },
      headers: { 'idempotency-key': 'create-endpoint-0002' },
    });
    expect(theirs.status).toBe(201);
    await t
      .get(DataSource)
      .query(`UPDATE idempotency_keys SET response_body = $1 WHERE "key" = 'create-endpoint-0002'`, [stored.response_body]);
    const moved = await t.request('POST', '/v1/webhooks', {
      key: other.key,
      body: { url: receiver.route('sealed-other', 204) },
      headers: { 'idempotency-key': 'create-endpoint-0002' },
    });
    expect(moved.status).toBe(500);
    expect(JSON.stringify(moved.body)).not.toContain(created.body.secret);
  });

  it('webhook:reseal without a configured key fails with a clear error and changes nothing', async () => {
    await t?.close();
    t = await start({});
    await expect(reseal(t)).rejects.toThrow(/no WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEYS is configured/);
  });
});
