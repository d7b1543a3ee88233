import type { CallLog } from '../control/calls.js';
import type { FaultControl } from '../control/control.js';
import type { FaultRegistry } from '../router/faults.js';
import type { AccountOperationId, ApiName } from '../router/spec.js';
import { accountHandle } from '../tenancy/account-handle.js';
import { type Accounts, OWN_MANAGERS_LIMIT } from '../tenancy/accounts.js';
import { type OwnManager, startOwnManager } from '../tenancy/own-manager.js';
import type { Traffic } from '../traffic/index.js';
import type { ManagerApi } from './apis.js';
import type { AccountSeed, CreateAccountOptions, SandboxAccount, SandboxOptions } from './sandbox-types.js';

/** What createAccount() and its undoing take from the sandbox. */
export interface CreatedAccountsHost {
  options: SandboxOptions;
  accounts: Accounts;
  traffic: Traffic;
  /** The interface the sandbox listens on, and the host its URLs name. */
  host: string;
  urlHost: string;
  managerApi: ManagerApi;
  /** The ports the sandbox's own APIs listen on. */
  listening: readonly number[];
  faults: Record<ApiName, FaultRegistry>;
  accountFaults: FaultControl<AccountOperationId>;
  calls: CallLog;
}

/** The sandbox's created accounts (createAccount()) and their own managers. */
export function createdAccounts(h: CreatedAccountsHost) {
  const { accounts, options } = h;
  /** Created accounts' own managers (createAccount(seed, { manager: true })), by customer. */
  const ownManagers = new Map<string, OwnManager>();
  /** Own managers being started (counted against OWN_MANAGERS_LIMIT with those running). */
  let startingManagers = 0;

  const remove = async (customer: string): Promise<boolean> => {
    if (!accounts.remove(customer)) return false;
    h.faults.account.clear((f) => f.when?.account === customer);
    const own = ownManagers.get(customer);
    ownManagers.delete(customer);
    await own?.close();
    return true;
  };

  const create = async (accountSeed?: AccountSeed, opts: CreateAccountOptions = {}): Promise<SandboxAccount> => {
    if (opts.manager && ownManagers.size + startingManagers >= OWN_MANAGERS_LIMIT)
      throw new Error(
        `createAccount: the sandbox runs ${OWN_MANAGERS_LIMIT} managers of created accounts, as many as it runs; remove an account that has one, or create this one without { manager: true }`,
      );
    const entry = accounts.create(accountSeed);
    if (opts.manager) {
      startingManagers++;
      try {
        ownManagers.set(
          entry.customer,
          await startOwnManager(entry, {
            traffic: h.traffic,
            egressAllow: options.egressAllow ?? [],
            targetCa: options.targetCa ?? [],
            host: h.host,
            urlHost: h.urlHost,
            managerApi: (own, ports, reserved) => h.managerApi(own, ports, reserved, false),
            listening: h.listening,
          }),
        );
      } catch (err) {
        accounts.remove(entry.customer);
        throw err;
      } finally {
        startingManagers--;
      }
    }
    return accountHandle(entry, {
      faults: h.faults.account,
      accountFaults: h.accountFaults,
      calls: h.calls,
      ownManager: ownManagers.get(entry.customer),
      remove,
    });
  };

  return { create, remove, managers: () => [...ownManagers.values()] };
}
