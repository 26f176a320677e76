// Node's libuv thread pool: JOBS pbkdf2 hashes (each a few hundred ms of
// one CPU in a pool thread) queued at once from the event loop, which then
// waits in epoll for their results. The pool's size is UV_THREADPOOL_SIZE
// (libuv's default 4). Prints its truth as one JSON line.
'use strict';
const crypto = require('crypto');
const jobs = Number(process.argv[2] || 8);
const rounds = Number(process.argv[3] || 100000);
const start = process.hrtime.bigint();
let done = 0;
for (let i = 0; i < jobs; i++) {
  crypto.pbkdf2('password', 'salt' + i, rounds, 64, 'sha512', (err) => {
    if (err) throw err;
    if (++done === jobs) {
      const wallS = Number(process.hrtime.bigint() - start) / 1e9;
      console.log(JSON.stringify({
        jobs, rounds, wall_s: wallS, node: process.version,
        pool_size: Number(process.env.UV_THREADPOOL_SIZE || 4),
        main_tid: process.pid,
      }));
    }
  });
}
