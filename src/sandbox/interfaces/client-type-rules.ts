/**
 * How a provider that registers applications by type derives a client type's OAuth fields
 * from IdpAppType (contract 2.3, rule 2). The sandbox's table; docs/user/sandbox.md repeats it.
 */
export const appTypeDerivation = {
  web: { TokenEndpointAuthMethod: "client_secret_basic", GrantType: "authorization_code,refresh_token", ResponseTypes: "code" },
  native: { TokenEndpointAuthMethod: "client_secret_post", GrantType: "authorization_code,pkce,refresh_token", ResponseTypes: "code" },
  browser: { TokenEndpointAuthMethod: "client_secret_post", GrantType: "authorization_code,pkce", ResponseTypes: "code" },
  service: { TokenEndpointAuthMethod: "client_secret_basic", GrantType: "client_credentials", ResponseTypes: "token" },
} as const;

export type IdpAppType = keyof typeof appTypeDerivation;

export const responseTypeValues = ["code", "token", "it_token", "none"] as const;
export const grantTypeValues = ["authorization_code", "pkce", "client_credentials", "device_code", "refresh_token", "password", "implicit"] as const;

/** Values of a CSV field that are not allowed, or undefined when none is given at all. */
export function csvProblem(value: string, allowed: readonly string[]): string | undefined {
  const items = value.split(",").map((s) => s.trim());
  if (items.length === 0 || items.every((s) => s === "")) return "must list at least one value";
  const bad = items.filter((s) => !allowed.includes(s));
  return bad.length === 0 ? undefined : `unknown value(s) ${bad.join(", ")}; allowed: ${allowed.join(", ")}`;
}
