import { listOperations, loadBundle } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlClient, createControlClient, type OperationId } from '../../src/control/client.js';
import { defaultSeed, type Sandbox, startSandbox } from '../../src/index.js';

// Every operation of the control API's bundle, called through its typed client against a sandbox (the
// table is keyed by the generated operationIds: an operation added to the spec does not compile here
// until it has a case), each answer a 2xx the bundle declares and read as the client types it.

const doc = loadBundle('sandbox-control');
let sandbox: Sandbox;
let control: ControlClient;
beforeAll(async () => {
  sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, proxyPorts: true });
  control = createControlClient({ baseUrl: sandbox.accountUrl });
});
afterAll(async () => {
  await sandbox?.close();
});

/** One call per operation, in an order where each finds what it needs; returns the status answered. */
const cases: Record<OperationId, () => Promise<number>> = {
  getState: async () => {
    const { data, response } = await control.getState();
    expect(data?.account).toMatchObject({ customer: defaultSeed().account.customer });
    return response.status;
  },
  createAccount: async () => {
    const { data, response } = await control.createAccount({ body: {} });
    expect(data?.customer).toMatch(/^hl_/);
    expect(data?.credentials.tokens.length).toBeGreaterThan(0);
    made = data?.customer ?? '';
    return response.status;
  },
  listAccounts: async () => {
    const { data, response } = await control.listAccounts();
    expect(data?.accounts).toEqual([made]);
    return response.status;
  },
  getClock: async () => {
    const { data, response } = await control.getClock({ params: { query: { account: made } } });
    expect(data?.offset_ms).toBe(0);
    return response.status;
  },
  changeClock: async () => {
    const { data, response } = await control.changeClock({ body: { advance_ms: 86_400_000 } });
    expect(data?.offset_ms).toBeGreaterThanOrEqual(86_400_000);
    return response.status;
  },
  resetClock: async () => {
    const { data, response } = await control.resetClock();
    expect(data?.offset_ms).toBe(0);
    return response.status;
  },
  addFault: async () => {
    const { data, response } = await control.addFault({ body: { operationId: 'getBalance', sequence: [{ status: 503 }, { pass: true }] } });
    expect(data?.fault).toMatchObject({ operationId: 'getBalance', step: 0, remaining: 1 });
    return response.status;
  },
  listFaults: async () => {
    const { data, response } = await control.listFaults();
    expect(data?.faults.map((f) => f.operationId)).toEqual(['getBalance']);
    return response.status;
  },
  deleteFaults: async () => {
    const { data, response } = await control.deleteFaults();
    expect(data?.cleared).toBe(1);
    return response.status;
  },
  listCalls: async () => {
    const { data, response } = await control.listCalls({ params: { query: { api: 'account' } } });
    expect(data?.calls).toEqual([]);
    return response.status;
  },
  deleteCalls: async () => {
    const { data, response } = await control.deleteCalls();
    expect(data?.cleared).toBe(0);
    return response.status;
  },
  getSettled: async () => {
    const { data, response } = await control.getSettled();
    expect(data?.settled).toBe(true);
    return response.status;
  },
  getCaCertificate: async () => {
    const { data, response } = await control.getCaCertificate();
    expect(data).toMatch(/^-----BEGIN CERTIFICATE-----/);
    return response.status;
  },
  deleteAccount: async () => {
    const { data, response } = await control.deleteAccount({ params: { path: { customer: made } } });
    expect(data?.removed).toBe(made);
    return response.status;
  },
  resetSandbox: async () => {
    const { data, response } = await control.resetSandbox({ body: {} });
    expect(data?.reset).toBe(true);
    return response.status;
  },
};
let made = '';

describe('the control API through its typed client', () => {
  it('has a case for every operation of the bundle', () => {
    expect(Object.keys(cases).sort()).toEqual(
      listOperations(doc)
        .map((o) => o.operationId)
        .sort(),
    );
  });

  it('calls every operation, each answered with a 2xx it declares', async () => {
    for (const [id, call] of Object.entries(cases)) {
      const op = listOperations(doc).find((o) => o.operationId === id);
      const status = await call();
      expect(
        op?.responses.map((r) => r.status),
        id,
      ).toContain(String(status));
      expect(status, id).toBeLessThan(300);
    }
  }, 60_000);

  it('a refusal is the error the bundle declares, naming the field', async () => {
    const { error, response } = await control.addFault({ body: { operationId: 'getZone', status: 99 } });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ details: [{ field: 'body.status' }] });
  });
});
