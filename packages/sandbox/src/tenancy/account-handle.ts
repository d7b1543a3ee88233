import type { CallLog } from '../control/calls.js';
import type { FaultControl } from '../control/control.js';
import type { Store } from '../domain/state.js';
import { credentialsOf } from '../host/boot.js';
import type { SandboxAccount } from '../host/sandbox-types.js';
import type { FaultRegistry } from '../router/faults.js';
import type { AccountOperationId } from '../router/spec.js';
import type { AccountEntry } from './accounts.js';
import type { OwnManager } from './own-manager.js';

// What a test holds of a sandbox or of one of its accounts: its clock, and for a created account its
// credentials, faults, calls, state and own manager, each limited to that account.

/** A store's clock as the sandbox and its accounts hand it out (`now()` a Date). */
export function clockOf(store: Store): SandboxAccount['clock'] {
  return {
    now: () => new Date(store.clock.now()),
    advance: (ms) => store.clock.advance(ms),
    set: (at) => store.clock.set(at),
    reset: () => store.clock.reset(),
  };
}

/** The sandbox's parts an account's handle reaches into, each shared by every account. */
export interface AccountHandleHost {
  /** The account API's fault registry, and its typed control (which checks operationIds). */
  faults: FaultRegistry;
  accountFaults: FaultControl<AccountOperationId>;
  calls: CallLog;
  ownManager?: OwnManager;
  remove(customer: string): Promise<boolean>;
}

/** The handle `createAccount()` returns for an account of the sandbox. */
export function accountHandle(entry: AccountEntry, sandbox: AccountHandleHost): SandboxAccount {
  const { customer, store: own } = entry;
  const credentials = credentialsOf(own);
  const mine = (f: { when?: { account?: string } }) => f.when?.account === customer;
  const { ownManager } = sandbox;
  return {
    customer,
    token: credentials.token,
    credentials,
    clock: clockOf(own),
    faults: {
      arm: (spec) => sandbox.accountFaults.arm({ ...spec, when: { ...spec.when, account: customer } }),
      list: () => sandbox.faults.list().filter(mine),
      clear: () => sandbox.faults.clear(mine),
    },
    calls: (filter) => sandbox.calls.list({ ...filter, account: customer }),
    state: () => own.toData(),
    ...(ownManager
      ? {
          manager: {
            url: ownManager.url,
            ports: { manager: ownManager.port, proxy: ownManager.proxy },
            listeningPorts: ownManager.listening,
          },
        }
      : {}),
    reset: async () => {
      entry.reset();
      await ownManager?.reset();
    },
    remove: async () => {
      await sandbox.remove(customer);
    },
  };
}
