// Type-aware lint: floating promises, misused promises, unbounded Promise.all in the product
// code, kebab-case file names, named exports, no process.exit.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import unicorn from "eslint-plugin-unicorn";

/** Everywhere; the product code adds the Promise.all rule (a rule's options replace, not merge). */
const restricted = [
  { selector: "ExportDefaultDeclaration", message: "Use named exports." },
  { selector: "CallExpression[callee.object.name='process'][callee.property.name='exit']", message: "Set process.exitCode so logs flush." },
];

export default tseslint.config(
  // src/validate/compiled/: ajv's generated standalone code (`npm run schemas`; a test checks it is current)
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "bench/out/**", ".gatesync/**", "src/validate/compiled/**", ".tmp-reporter-*/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "bin/*.js", "bench/*.mjs", "examples/ci/*.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { unicorn },
    rules: {
      "unicorn/filename-case": ["error", { case: "kebabCase" }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true }],
      "no-restricted-syntax": ["error", ...restricted],
    },
  },
  {
    // Remote calls fan out only through a bounded queue: every Promise.all in the product code
    // must say, in its disable comment, what bounds it.
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...restricted,
        {
          selector: "CallExpression[callee.object.name='Promise'][callee.property.name=/^(all|allSettled|any)$/]",
          message:
            "Unbounded fan-out: send remote calls through an interface queue (p-queue), then say what bounds this with `// eslint-disable-next-line no-restricted-syntax -- bounded by …`.",
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  {
    // the launcher is CommonJS (bin/package.json): Node's ES module loader is not in its startup snapshot
    files: ["bin/*.js"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", exports: "writable", __dirname: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // the status page's script runs in the browser
    files: ["ui/**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      globals: {
        window: "readonly",
        document: "readonly",
        location: "readonly",
        history: "readonly",
        fetch: "readonly",
        EventSource: "readonly",
        DOMParser: "readonly",
        URLSearchParams: "readonly",
      },
    },
  },
  {
    files: ["eslint.config.js", "vitest.config.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
);
