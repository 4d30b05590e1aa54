/** The flags of `gatesync import`, as commander gives them (apart: command.ts and action.ts both read it). */
export interface ImportFlags {
  readonly syncDump: string[];
  readonly operator: string[];
  readonly dashboardExport: string[];
  readonly answers: string[];
  readonly merge: boolean;
  readonly encryptTo: string[];
  readonly environment: string;
  readonly format: "text" | "json";
  readonly maxFileBytes?: string;
  readonly productProvider?: string;
}
