/**
 * Runs a measured process inside a memory cgroup of the size the shipped Kubernetes manifest
 * gives gatesync (512 MiB: examples/k8s), as a container would: Node sizes its heap from the
 * cgroup's limit (259 MB of heap under 512 MiB, measured with Node 20), so a process whose live
 * data does not fit dies there with "JavaScript heap out of memory" — on a machine without the
 * limit the same process merely grows. cgroup v1 (memory controller) and v2 are supported; where
 * neither can be written (not root, no controller) the run is unlimited and says so.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";

/** The shipped manifest's memory limit (examples/k8s/gatesync.yaml: limits.memory). */
export const manifestLimitMiB = 512;

export interface MemoryCgroup {
  /** How the limit is applied: "cgroup v1 512 MiB", "cgroup v2 512 MiB". */
  readonly label: string;
  /** argv prefix that starts the command inside the cgroup. */
  readonly wrap: readonly string[];
  /** The cgroup's peak memory use so far (page cache included), in MiB, when the kernel keeps it. */
  peakMiB(): Promise<number | undefined>;
  remove(): Promise<void>;
}

const v1Root = "/sys/fs/cgroup/memory";
const v2Root = "/sys/fs/cgroup";

/** Makes a fresh cgroup limited to `mib`, or undefined when this machine does not let the bench. */
export async function memoryCgroup(name: string, mib = manifestLimitMiB): Promise<MemoryCgroup | undefined> {
  const bytes = String(mib * 1024 * 1024);
  const v1 = path.join(v1Root, name);
  const v2 = path.join(v2Root, name);
  try {
    if (existsSync(path.join(v1Root, "memory.limit_in_bytes"))) {
      await mkdir(v1, { recursive: true });
      await writeFile(path.join(v1, "memory.limit_in_bytes"), bytes);
      await writeFile(path.join(v1, "memory.max_usage_in_bytes"), "0").catch(() => undefined);
      return cgroup(`cgroup v1 ${mib} MiB`, v1, "memory.max_usage_in_bytes");
    }
    if (existsSync(path.join(v2Root, "cgroup.controllers")) && (await readFile(path.join(v2Root, "cgroup.controllers"), "utf8")).includes("memory")) {
      await mkdir(v2, { recursive: true });
      await writeFile(path.join(v2, "memory.max"), bytes);
      return cgroup(`cgroup v2 ${mib} MiB`, v2, "memory.peak");
    }
  } catch {
    return undefined; // not root, read-only cgroup file system: unlimited
  }
  return undefined;
}

function cgroup(label: string, dir: string, peakFile: string): MemoryCgroup {
  const procs = path.join(dir, "cgroup.procs");
  return {
    label,
    // the shell moves itself into the cgroup, then becomes the command: everything it starts stays inside
    wrap: ["/bin/sh", "-c", `echo $$ > ${procs} && exec "$@"`, "sh"],
    async peakMiB() {
      const text = await readFile(path.join(dir, peakFile), "utf8").catch(() => undefined);
      return text === undefined ? undefined : Number(text.trim()) / (1024 * 1024);
    },
    async remove() {
      await rmdir(dir).catch(() => undefined);
    },
  };
}
