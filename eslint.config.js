// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // The exporter reads time only through a `Clock` (src/clock.ts): monotonic for every wait
    // and duration, wall for what people read. The simulator keeps its own simulated clock.
    files: ["src/**/*.ts"],
    ignores: ["src/simulator/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "read the wall clock through a Clock" },
        {
          object: "performance",
          property: "now",
          message: "read the monotonic clock through a Clock",
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "read the wall clock through a Clock",
        },
      ],
    },
  },
  {
    // The parts are built in order, each from parts built before it: nothing is used before its
    // declaration, not even in a callback that would run only later (docs/design.md).
    files: ["src/daemon/**/*.ts", "src/exporter/**/*.ts"],
    rules: {
      "@typescript-eslint/no-use-before-define": [
        "error",
        { functions: false, classes: false, typedefs: false, ignoreTypeReferences: true },
      ],
    },
  },
  {
    // Tests index into results they have just checked; `!` keeps them readable.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" },
  },
  { files: ["**/*.js"], ...tseslint.configs.disableTypeChecked },
);
