// Child process for lock tests: takes the state lock, says so, and holds it until killed.
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";

const backend = new SqliteStateBackend(process.argv[2]!, { refreshMs: 200 });
await backend.lock("test-holder");
process.stdout.write("locked\n");
setInterval(() => undefined, 1000);
