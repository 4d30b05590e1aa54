// Entry for running the CLI from TypeScript sources in a child process (tests only).
import { main } from "../../src/cli.js";

await main(process.argv);
