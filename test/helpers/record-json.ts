/** A record (or any value holding records) as JSON gives it — as `state pull` writes it: each payload as its value. */
export const asJson = (value: unknown): unknown => (value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown));
