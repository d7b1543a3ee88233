// operationId must be camelCase verbNoun, with a verb that fits the HTTP method: the operationId is
// the name a user sees in the client, the docs, the sandbox handler and the tests.
export const VERBS = {
  get: ['get', 'list'],
  // `reset`: POST /__sandbox/reset of the sandbox's control API, which puts the sandbox back at its seed.
  post: [
    'create',
    'add',
    'refresh',
    'switch',
    'change',
    'ban',
    'unban',
    'enable',
    'shutdown',
    'restart',
    'upgrade',
    'delete',
    'remove',
    'reset',
  ],
  // `reset`: PUT /api/logs_reset of the manager (observed), which clears the request log.
  put: ['update', 'set', 'reset'],
  patch: ['update', 'set'],
  // `reset`: DELETE /__sandbox/clock of the control API, which puts the clock back on real time.
  delete: ['delete', 'remove', 'reset'],
};

export default function operationIdVerb(operationId, _opts, context) {
  const method = String(context.path[context.path.length - 2]).toLowerCase();
  const verbs = VERBS[method];
  if (!verbs) return [];
  if (typeof operationId !== 'string' || !/^[a-z]+[A-Z][A-Za-z0-9]*$/.test(operationId)) {
    return [{ message: `operationId "${operationId}" must be camelCase verbNoun, e.g. ${verbs[0]}Zone` }];
  }
  const verb = operationId.match(/^[a-z]+/)[0];
  if (!verbs.includes(verb)) {
    return [
      {
        message: `operationId "${operationId}" starts with "${verb}"; a ${method.toUpperCase()} operation starts with one of: ${verbs.join(', ')}`,
      },
    ];
  }
  return [];
}
