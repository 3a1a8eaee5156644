/**
 * The web configuration file (`--web.config.file`), in the format Prometheus exporters share:
 * TLS for the HTTP server (`tls_server_config`), basic-auth users with bcrypt hashes
 * (`basic_auth_users`) and extra response headers (`http_server_config.headers`). It is read
 * and checked whole (the certificate and key files too) before it is used, so that a bad file
 * is refused with the setting at fault, never half applied. Errors never quote a hash, a key
 * or a password.
 */
import { readFile } from "node:fs/promises";
import { createSecureContext } from "node:tls";
import { z } from "zod";
import { ConfigError, describeIssues } from "./load.js";
import { issueMessages, readYaml, type SettingHints } from "./problems.js";

/** How the server treats client certificates, by the exporter toolkit's names. */
export const CLIENT_AUTH_TYPES = [
  "NoClientCert",
  "RequestClientCert",
  "RequireAnyClientCert",
  "VerifyClientCertIfGiven",
  "RequireAndVerifyClientCert",
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS = {
  TLS10: "TLSv1",
  TLS11: "TLSv1.1",
  TLS12: "TLSv1.2",
  TLS13: "TLSv1.3",
} as const;
type TlsVersionName = keyof typeof TLS_VERSIONS;
const tlsVersion = z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]]);

/** Settings of the format this exporter does not implement: refused, never silently ignored. */
const notSupported = z.never({ error: "is not supported by pgcp-exporter" }).optional();

/** A bcrypt hash as htpasswd and the exporter toolkit's docs make them ($2a$, $2b$ or $2y$). */
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** Response headers the file may set (the toolkit's list); others are refused. */
const SETTABLE_HEADERS = [
  "Strict-Transport-Security",
  "X-Content-Type-Options",
  "X-Frame-Options",
  "X-XSS-Protection",
  "Content-Security-Policy",
] as const;

const fileSchema = z
  .object({
    tls_server_config: z
      .object({
        cert_file: z.string().min(1).optional(),
        key_file: z.string().min(1).optional(),
        cert: z.string().min(1).optional(),
        key: z.string().min(1).optional(),
        client_auth_type: z.enum(CLIENT_AUTH_TYPES).default("NoClientCert"),
        client_ca_file: z.string().min(1).optional(),
        min_version: tlsVersion.default("TLS12"),
        max_version: tlsVersion.default("TLS13"),
        cipher_suites: notSupported,
        curve_preferences: notSupported,
        prefer_server_cipher_suites: notSupported,
        client_allowed_sans: notSupported,
      })
      .strict()
      .optional(),
    http_server_config: z
      .object({
        headers: z.partialRecord(z.enum(SETTABLE_HEADERS), z.string()).default({}),
        http2: notSupported,
      })
      .strict()
      .optional(),
    basic_auth_users: z
      .record(
        z
          .string()
          .min(1, "a user name must not be empty")
          .regex(/^[^:]*$/, "must not hold ':'"),
        z.string().regex(BCRYPT_HASH, "must be a bcrypt hash ($2y$…), never a plain password"),
      )
      .optional(),
    rate_limit: notSupported,
  })
  .strict();

/** What the settings without a default expect, for problems to say (see `CONFIG_HINTS`). */
const WEB_HINTS: SettingHints = {
  "tls_server_config.cert_file": {
    expects: "a file's path",
    example: '"/etc/pgcp-exporter/tls.crt"',
  },
  "tls_server_config.key_file": {
    expects: "a file's path",
    example: '"/etc/pgcp-exporter/tls.key"',
  },
  "tls_server_config.client_ca_file": {
    expects: "a file's path",
    example: '"/etc/pgcp-exporter/client-ca.crt"',
  },
  "tls_server_config.cert": {
    expects: "a certificate in PEM",
    example: "|\n  -----BEGIN CERTIFICATE-----…",
  },
  "tls_server_config.key": {
    expects: "a private key in PEM",
    example: "|\n  -----BEGIN PRIVATE KEY-----…",
  },
  "http_server_config.headers": {
    expects: "a mapping of header names to values",
    example: '{Strict-Transport-Security: "max-age=31536000"}',
  },
  "http_server_config.headers.*": { expects: "a header value", example: '"max-age=31536000"' },
  basic_auth_users: {
    expects: "a mapping of user names to bcrypt hashes",
    example: '{prometheus: "$2y$10$…"}',
  },
  "basic_auth_users.*": { expects: "a bcrypt hash", example: '"$2y$10$…"' },
};

const WEB_MESSAGES = issueMessages(fileSchema, WEB_HINTS);

/** The files `tls_server_config` names, by setting. */
const TLS_FILES = ["cert_file", "key_file", "client_ca_file"] as const;

export interface TlsSettings {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Certificates that client certificates are verified against. */
  readonly ca: Buffer | undefined;
  readonly clientAuth: ClientAuthType;
  readonly minVersion: (typeof TLS_VERSIONS)[TlsVersionName];
  readonly maxVersion: (typeof TLS_VERSIONS)[TlsVersionName];
}

/** A checked web configuration: what the HTTP server applies. */
export interface WebSecurity {
  /** Where it was read from, for messages. */
  readonly file: string;
  /** Serve HTTPS with these; none serves plain HTTP. */
  readonly tls: TlsSettings | undefined;
  /** User name → bcrypt hash; empty means no authentication. */
  readonly users: ReadonlyMap<string, string>;
  readonly headers: Readonly<Record<string, string>>;
}

/** Reads and checks the web configuration file; a ConfigError names each problem. */
export async function loadWebConfig(file: string): Promise<WebSecurity> {
  const fail = (problems: string[]) => new ConfigError(`web configuration ${file}`, problems);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw fail([`cannot read the file (${(cause as NodeJS.ErrnoException).code ?? "error"})`]);
  }
  const read = readYaml(text);
  if (!read.ok) throw fail(read.problems);
  const raw = read.value ?? {};
  const parsed = fileSchema.safeParse(raw, { error: WEB_MESSAGES });
  if (!parsed.success) {
    // The files it names are checked too, so that every problem is listed at once.
    throw fail([...describeIssues(parsed.error), ...(await unreadableFiles(raw))]);
  }
  const { tls_server_config: tlsConfig, http_server_config: http } = parsed.data;

  let tls: TlsSettings | undefined;
  if (tlsConfig !== undefined) {
    const problems: string[] = [];
    const pem = async (inline: string | undefined, path: string | undefined, name: string) => {
      if (inline !== undefined && path !== undefined) {
        problems.push(`tls_server_config: give ${name} or ${name}_file, not both`);
        return undefined;
      }
      if (inline !== undefined) return Buffer.from(inline);
      if (path === undefined) {
        problems.push(`tls_server_config.${name}_file: is required`);
        return undefined;
      }
      return readPem(path, `tls_server_config.${name}_file`, problems);
    };
    const cert = await pem(tlsConfig.cert, tlsConfig.cert_file, "cert");
    const key = await pem(tlsConfig.key, tlsConfig.key_file, "key");
    const verifies = tlsConfig.client_auth_type !== "NoClientCert";
    let ca: Buffer | undefined;
    if (tlsConfig.client_ca_file !== undefined) {
      ca = await readPem(tlsConfig.client_ca_file, "tls_server_config.client_ca_file", problems);
    } else if (
      tlsConfig.client_auth_type === "VerifyClientCertIfGiven" ||
      tlsConfig.client_auth_type === "RequireAndVerifyClientCert"
    ) {
      problems.push(
        `tls_server_config.client_ca_file: is required with client_auth_type ${tlsConfig.client_auth_type}`,
      );
    }
    if (!verifies && ca !== undefined) {
      problems.push(
        "tls_server_config.client_ca_file: set client_auth_type too (RequireAndVerifyClientCert)",
      );
    }
    const minVersion = TLS_VERSIONS[tlsConfig.min_version];
    const maxVersion = TLS_VERSIONS[tlsConfig.max_version];
    if (tlsConfig.min_version > tlsConfig.max_version) {
      problems.push("tls_server_config: min_version is above max_version");
    }
    if (problems.length === 0 && cert !== undefined && key !== undefined) {
      try {
        createSecureContext({ cert, key, ...(ca === undefined ? {} : { ca }) });
      } catch (cause) {
        problems.push(`tls_server_config: ${tlsProblem(cause)}`);
      }
    }
    if (problems.length > 0 || cert === undefined || key === undefined) throw fail(problems);
    tls = { cert, key, ca, clientAuth: tlsConfig.client_auth_type, minVersion, maxVersion };
  }
  return {
    file,
    tls,
    users: new Map(Object.entries(parsed.data.basic_auth_users ?? {})),
    headers: http?.headers ?? {},
  };
}

/** A problem for each file `tls_server_config` names (as a string) that cannot be read. */
async function unreadableFiles(raw: unknown): Promise<string[]> {
  const tls =
    typeof raw === "object" && raw !== null && "tls_server_config" in raw
      ? raw.tls_server_config
      : undefined;
  if (typeof tls !== "object" || tls === null) return [];
  const problems: string[] = [];
  for (const key of TLS_FILES) {
    const path: unknown = (tls as Record<string, unknown>)[key];
    if (typeof path === "string" && path !== "") {
      await readPem(path, `tls_server_config.${key}`, problems);
    }
  }
  return problems;
}

async function readPem(path: string, setting: string, problems: string[]) {
  try {
    return await readFile(path);
  } catch (cause) {
    problems.push(
      `${setting}: cannot read ${path} (${(cause as NodeJS.ErrnoException).code ?? "error"})`,
    );
    return undefined;
  }
}

/** OpenSSL's reason, without the key material it never quotes anyway. */
function tlsProblem(cause: unknown): string {
  const code = (cause as { code?: unknown }).code;
  if (code === "ERR_OSSL_X509_KEY_VALUES_MISMATCH") return "the key does not match the certificate";
  const reason = (cause as Error).message.split("\n")[0] ?? "error";
  return `the certificate or key cannot be used (${reason})`;
}
