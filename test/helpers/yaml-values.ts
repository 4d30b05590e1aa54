/** Values for the YAML property tests: every JSON type, strings and keys that YAML readers could read differently. */
import fc from "fast-check";

/** Values of every JSON type, keys included that `yaml` and js-yaml could read differently. */
export const yamlTrickyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.string(),
    fc.constantFrom(
      "true",
      "True",
      "null",
      "~",
      "0o17",
      "0x1F",
      "0b11",
      "1_000",
      "+12",
      "-0",
      "012",
      ".5",
      "1e3",
      "-.inf",
      ".NaN",
      "2001-12-14",
      "yes",
      "<<",
      "a: b",
      "# c",
      "- x",
    ),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("null", "~", "1", "1.0", "true", "__proto__", "<<", "")), tie("v"), { maxKeys: 4 }),
  ),
})).v;
