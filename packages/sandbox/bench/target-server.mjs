// The bench's target servers (target.mjs: the sandbox or plain node:http answering the same JSON), each in
// a process of its own, and the two account API requests both benches send them (bench.mjs, cpu.mjs).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const target = fileURLToPath(new URL('./target.mjs', import.meta.url));
export const headers = { authorization: 'Bearer sandbox-token-0001', 'content-type': 'application/json' };
export const get = { method: 'GET', path: '/api/zone?customer=hl_1a2b3c4d&zone=static_zone', headers };
export const post = {
  method: 'POST',
  path: '/api/zone/domain_perm',
  headers,
  body: JSON.stringify({ customer: 'hl_1a2b3c4d', zone: 'static_zone', type: 'whitelist', domain: 'bench.example.com' }),
};

export function start(args, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(target, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
    child.once('message', (m) =>
      resolve({
        url: m.url,
        stop: () => child.kill(),
        /** Ends the process in order (a --cpu-prof profile is written); resolves when it has exited. */
        exit: () =>
          new Promise((done) => {
            child.removeAllListeners('exit');
            child.once('exit', done);
            child.send('exit');
          }),
        cpu: () =>
          new Promise((done) => {
            const on = (r) => {
              if (r.cpu === undefined) return;
              child.off('message', on);
              done(r.cpu);
            };
            child.on('message', on);
            child.send('cpu');
          }),
      }),
    );
    child.once('exit', (code) => reject(new Error(`${args[0]} server exited (${code})`)));
  });
}
