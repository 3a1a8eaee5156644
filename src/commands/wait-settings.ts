/**
 * What `wait` reads of the configuration: the environment alone (it takes no file), with the
 * project of `--project`, as `run` reads it; and where its spans go, from OpenTelemetry's
 * standard variables (`OTEL_EXPORTER_OTLP_*`, `config/otlp.ts`).
 *
 * The OpenTelemetry settings are read apart from the rest. A CI job's environment often holds
 * `OTEL_*` variables meant for other tools (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`, say), and
 * tracing must never decide whether the job passes: their problems turn the spans off with a
 * warning, where any other setting's problem stops the command (exit 2).
 */
import {
  ConfigError,
  ENVIRONMENT,
  OTLP_HEADER_VARIABLES,
  SECRET_VARIABLES,
  loadConfig,
  readSecretFiles,
  resolveOtlp,
  type Config,
  type OtlpTarget,
  type RawConfig,
} from "../config/index.js";

export interface WaitSettings {
  readonly config: Config;
  /** An OTLP endpoint is set (spans may still be off: `OTEL_TRACES_EXPORTER=none`). */
  readonly endpointSet: boolean;
  /** Where spans go; absent when no endpoint is set, spans are off, or the settings are invalid. */
  readonly traces?: OtlpTarget;
  /** The resource's attributes (`service.name` among them). */
  readonly resource: Readonly<Record<string, string>>;
  /** Why spans are not sent although an endpoint is set: the settings' problems, one line. */
  readonly otlpProblem?: string;
}

/** The variables of the OpenTelemetry settings, the headers' (and their `_FILE` forms) included. */
const OTLP_VARIABLES: readonly string[] = [
  ...ENVIRONMENT.filter((v) => v.path[0] === "otlp").map((v) => v.name),
  ...Object.values(OTLP_HEADER_VARIABLES).flatMap((name) => [name, `${name}_FILE`]),
];

/** The variables that set where spans go: without one, nothing of the rest is read. */
const TRACES_ENDPOINT_VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
] as const;

/** Reads the settings from `env`; a problem outside the OpenTelemetry settings is thrown. */
export async function loadWaitSettings(
  projectId: string,
  env: NodeJS.ProcessEnv,
): Promise<WaitSettings> {
  const overrides: RawConfig = { projects: [projectId] };
  const withoutOtlp = Object.fromEntries(
    Object.entries(env).filter(([name]) => !OTLP_VARIABLES.includes(name)),
  );
  const config = await loadConfig({
    env: readSecretFiles(withoutOtlp, SECRET_VARIABLES),
    overrides,
  });
  // No endpoint, no spans: variables set for other tools are then not even read.
  if (!TRACES_ENDPOINT_VARIABLES.some((name) => (env[name] ?? "") !== "")) {
    return { config, endpointSet: false, resource: {} };
  }
  try {
    const withSecrets = readSecretFiles(env, SECRET_VARIABLES);
    const otlp = resolveOtlp(await loadConfig({ env: withSecrets, overrides }), withSecrets);
    return {
      config,
      endpointSet: true,
      resource: otlp.resource,
      ...(otlp.traces === undefined ? {} : { traces: otlp.traces }),
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // The rest loaded without these variables: every problem left is one of theirs.
    return { config, endpointSet: true, resource: {}, otlpProblem: error.problems.join("; ") };
  }
}
