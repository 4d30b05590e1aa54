// Preloaded into a measured `gatesync` process (bench/sops.ts): at exit it writes the process's CPU
// time — every thread's, user and system — to stderr, a figure a loaded machine disturbs far less
// than the wall time.
process.on("exit", () => {
  const used = process.cpuUsage();
  process.stderr.write(`\nbench-cpu-us ${used.user + used.system}\n`);
});
