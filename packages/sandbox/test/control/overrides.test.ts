import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/index.js';
import { bearer, raw } from '../helpers.js';

// Overrides of single operations, typed by operationId, their answers checked against the spec.

let s: Sandbox;
let calls = 0;
beforeAll(async () => {
  s = await startSandbox({
    overrides: {
      account: {
        getBalance: () => {
          calls++;
          // The third call answers what the spec refuses (a string balance), as a broken test double would.
          if (calls === 3) return { body: { balance: 'not a number' as unknown as number, pending_costs: 0 } };
          if (calls === 4) return { status: 418, body: { balance: 1, pending_costs: 0 } };
          return { body: { balance: 0.5 * calls, pending_costs: 0 } };
        },
      },
      manager: { getVersion: () => ({ body: { version: '9.9.9', argv: '--overridden' } }) },
    },
  });
});
afterAll(async () => {
  await s?.close();
});

describe('overrides', () => {
  it('answer in place of the operation, on both APIs', async () => {
    const first = await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: bearer });
    expect([first.status, first.json()]).toEqual([200, { balance: 0.5, pending_costs: 0 }]);
    expect((await raw(s.managerUrl, 'GET', '/api/version')).json()).toMatchObject({ version: '9.9.9' });
    // Other operations are the sandbox's own; credentials are still checked before the override runs.
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance')).status).toBe(401);
    expect(calls).toBe(1);
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: bearer })).json().balance).toBe(1);
  });

  it('an answer the spec refuses is a 500 naming the field, not served', async () => {
    const bad = await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: bearer });
    expect(bad.status).toBe(500);
    expect(bad.text).not.toContain('not a number');
    expect(bad.json().error).toBe('overrides.account.getBalance answered a body the spec refuses: body.balance must be number');
    expect(bad.json().details).toEqual([{ field: 'body.balance', reason: 'must be number' }]);
    const undeclared = await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: bearer });
    expect(undeclared.status).toBe(500);
    expect(undeclared.json().error).toMatch(/overrides\.account\.getBalance answered status 418, which the spec does not declare/);
  });

  it('an override of an operation the API does not have fails the start, naming it', async () => {
    await expect(
      // @ts-expect-error listProxies is a manager operation
      startSandbox({ overrides: { account: { listProxies: () => undefined } } }),
    ).rejects.toThrow('overrides.account.listProxies: the account API has no operation listProxies');
  });
});
