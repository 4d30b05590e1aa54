/**
 * Runs a measured process as the shipped Kubernetes manifest runs gatesync (examples/k8s/
 * gatesync.yaml): inside a memory cgroup of its `limits.memory`, with its NODE_OPTIONS. Inside
 * the limit Node sizes its heap from it (259 MB of heap under 512 MiB with Node 20, unless
 * NODE_OPTIONS says otherwise), so a process whose live data does not fit dies there with
 * "JavaScript heap out of memory", and one whose pages do not fit is killed — on a machine
 * without the limit the same process merely grows. cgroup v1 (memory controller) and v2 are
 * supported; where neither can be written (not root, no controller) the run is unlimited and
 * says so.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const manifestFile = fileURLToPath(new URL("../examples/k8s/gatesync.yaml", import.meta.url));

interface Container {
  readonly name?: string;
  readonly env?: ReadonlyArray<{ readonly name?: string; readonly value?: string }>;
  readonly resources?: { readonly limits?: { readonly memory?: string } };
}

/** The gatesync container's memory limit (MiB) and NODE_OPTIONS in the shipped manifest. */
export function manifestMemory(file = manifestFile): { readonly limitMiB: number; readonly nodeOptions: string | undefined } {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    const value = doc.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: Container[] } } } } | null;
    const container = value?.kind === "Deployment" ? value.spec?.template?.spec?.containers?.find((c) => c.name === "gatesync") : undefined;
    const memory = /^(\d+)Mi$/.exec(container?.resources?.limits?.memory ?? "")?.[1];
    if (container === undefined || memory === undefined) continue;
    return { limitMiB: Number(memory), nodeOptions: container.env?.find((e) => e.name === "NODE_OPTIONS")?.value };
  }
  throw new Error(`${file}: no gatesync container with limits.memory in Mi`);
}

/** The shipped manifest's memory limit. */
export const manifestLimitMiB = manifestMemory().limitMiB;

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
