import { describe, expect, it } from 'vitest';
import { bearer, docs, raw, STATIC, useSandbox } from '../helpers.js';

// `customer` with a token: the docs (the spec's descriptions), the sandbox and the samples say one thing.
// The documentation gives it on every call; the provider's own clients send none and are answered for
// the token's account (observed), and so is the sandbox. The docs once said "Required with token".
const t = useSandbox();

/** Every description of the account bundle that speaks of the account id as `customer` does. */
function customerDescriptions(): string[] {
  const doc = docs.account as unknown as { components: { parameters: Record<string, { name: string; description: string }> } };
  return Object.values(doc.components.parameters)
    .filter((p) => p.name === 'customer')
    .map((p) => p.description);
}

describe('customer with a token', () => {
  it('the sandbox answers getZone with a token and no customer, for the token’s account', async () => {
    const res = await raw(t.sandbox.accountUrl, 'GET', `/api/zone?zone=${STATIC}`, { headers: bearer });
    expect(res.status, res.text).toBe(200);
    expect(res.json().name ?? STATIC).toBe(STATIC);
  });

  it('the docs say it may be left out with a token, except where an operation requires it', () => {
    const descriptions = customerDescriptions();
    expect(descriptions.length).toBeGreaterThan(1);
    const optional = descriptions.filter((d) => !/required on this operation|documentation lists it as required/i.test(d));
    expect(optional.length).toBeGreaterThan(0);
    for (const d of optional) {
      expect(d).not.toMatch(/Required with token/);
      expect(d).toMatch(/left out, the account the credential belongs to is used/);
    }
  });
});
