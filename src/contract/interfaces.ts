/**
 * The management interfaces gatesync writes to, as data: the one list of them. Call counts,
 * credentials, the `targets` section of gatesync.yaml, summaries and pages iterate this list, so
 * an interface is added here (and in its operations, its target's schema and the sandbox), not
 * in each place that counts or shows interfaces (docs/dev/adding-a-kind.md, "Adding an interface").
 */

/** One management interface: how its credential travels, and what people see it called. */
export interface ManagementInterface<N extends string = string> {
  /** Its key under `targets:` in gatesync.yaml, in plans' call counts and in metrics' labels. */
  readonly name: N;
  /** Its name in a page's column heading ("LLM"); plans and summaries write `name`. */
  readonly title: string;
  /** The header its credential travels in (the interface reference). */
  readonly credentialHeader: string;
  /**
   * The scheme written before the credential (`<scheme> <credential>`; "" sends it alone) when
   * the config gives none: production's own. The LLM service splits `Authorization` on a space
   * and refuses anything but two parts, so a bare key there is a 401 (issue 30).
   */
  readonly defaultAuthScheme: string;
  /** The member of `targets.<name>` in gatesync.yaml that names the variable holding the credential. */
  readonly credentialEnvKey: string;
}

const gateway: ManagementInterface<"gateway"> = {
  name: "gateway",
  title: "gateway",
  credentialHeader: "x-gw-authorization",
  defaultAuthScheme: "",
  credentialEnvKey: "credentialEnv",
};
const portal: ManagementInterface<"portal"> = {
  name: "portal",
  title: "portal",
  credentialHeader: "authorization",
  defaultAuthScheme: "",
  credentialEnvKey: "credentialEnv",
};
const dashboard: ManagementInterface<"dashboard"> = {
  name: "dashboard",
  title: "dashboard",
  credentialHeader: "authorization",
  defaultAuthScheme: "Bearer",
  credentialEnvKey: "tokenEnv",
};
const llm: ManagementInterface<"llm"> = {
  name: "llm",
  title: "LLM",
  credentialHeader: "authorization",
  defaultAuthScheme: "Bearer",
  credentialEnvKey: "credentialEnv",
};

/** Every interface, in the order counts, summaries and pages show them. */
export const managementInterfaces = [gateway, portal, dashboard, llm] as const;

/** The name of a registered interface. */
export type InterfaceName = (typeof managementInterfaces)[number]["name"];

/** A number per interface: the shape call counts take, whatever the interfaces are. */
export type PerInterface<T> = { readonly [I in InterfaceName]: T };

/** The interfaces' names, in registry order (read at call time, so a test may extend the list). */
export function interfaceNames(): InterfaceName[] {
  return managementInterfaces.map((i) => i.name);
}

/** The interface registered under `name`. */
export function managementInterface(name: InterfaceName): ManagementInterface<InterfaceName> {
  return managementInterfaces.find((i) => i.name === name)!;
}

/** One value per interface, in registry order. */
export function perInterface<T>(value: (name: InterfaceName) => T): PerInterface<T> {
  return Object.fromEntries(managementInterfaces.map((i) => [i.name, value(i.name)])) as PerInterface<T>;
}
