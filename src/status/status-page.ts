/**
 * The status page at `/`: glue between the shared project views, the `StatusTracker` (which
 * hears what only the page shows) and the pure renderer. Server-rendered HTML, no script,
 * never cached. `?account=NAME` and `?org=ORG_ID` (the page's own GET form writes them) show
 * only the projects of that account and/or organisation; a malformed value is answered 400.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRedactor } from "../config/index.js";
import type { SilenceConfig } from "../config/silences.js";
import { RESOURCE_ID_PATTERN } from "../contract/index.js";
import {
  ACCOUNT_NAME_PATTERN,
  computeSecrets,
  NO_COMPUTES,
  sinkSecrets,
  type ResolvedComputes,
  type ResolvedSink,
} from "../config/index.js";
import type { DaemonObserver } from "../sync/index.js";
import type { StatusFilter } from "./projects/filter.js";
import type { StatusSource } from "./shared/source.js";
import { renderStatusPage } from "./status-html.js";
import { statusView, type StatusView, type StatusViewOptions } from "./status-view.js";
import { StatusTracker } from "./tracker.js";
import { systemClock } from "../clock.js";

/** What the page shows, as the view reads it (`StatusViewOptions`), and how much of it. */
export interface StatusPageOptions extends Pick<
  StatusViewOptions,
  | "version"
  | "apiUrl"
  | "accounts"
  | "replica"
  | "sinks"
  | "silences"
  | "notReadyReason"
  | "readyProblems"
  | "now"
  | "limits"
> {
  /** What is known of each watched project, shared with the metrics (`ProjectViews`). */
  readonly projects: StatusSource;
  /**
   * Values that must never be shown (API key, sink URLs, signing secrets): removed from any
   * text from outside as a last line of defence. The page never receives them otherwise.
   */
  readonly secrets?: readonly string[];
  /**
   * `full` (the default): projects, failures, the outbox and dead letters, with ids and error
   * texts. `summary`: the counts only, with no project id, text from outside or API address.
   */
  readonly detail?: StatusDetail;
  /**
   * What the page hears of the daemon, when subscribed to it before the page is built (the
   * page reads the daemon's parts, so it is built after them); by default a tracker of its own.
   */
  readonly tracker?: StatusTracker;
}

/** How much the page shows (`status.page`; `off` serves no page at all). */
export type StatusDetail = "summary" | "full";

export interface StatusPage {
  /**
   * Subscribe it to the daemon (`createDaemon({ observers })`), as the project views are: the
   * tracker given, or the page's own.
   */
  readonly observer: DaemonObserver;
  /** The current view model, of the projects `filter` keeps (default: every watched one). */
  view(filter?: StatusFilter): StatusView;
  /** The route handler for `/`. */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Shows reloaded sinks from now on. Their secrets are added to those never shown; the former
   * ones stay among them, since texts kept from before may hold them.
   */
  setSinks(sinks: StatusPageOptions["sinks"], secrets: readonly string[]): void;
  /** Shows reloaded silences from now on. */
  setSilences(silences: readonly SilenceConfig[]): void;
}

export function createStatusPage(options: StatusPageOptions): StatusPage {
  const now = options.now ?? systemClock.wall;
  const tracker =
    options.tracker ??
    new StatusTracker({
      now,
      ...(options.limits?.failuresKept === undefined
        ? {}
        : { failuresKept: options.limits.failuresKept }),
    });
  let secrets = (options.secrets ?? []).filter((s) => s !== "");
  let redact = createRedactor(secrets);
  let sinks = options.sinks;
  let silences = options.silences ?? [];
  const view = (filter?: StatusFilter): StatusView =>
    statusView({
      source: options.projects,
      tracker,
      version: options.version,
      apiUrl: options.apiUrl,
      ...(options.accounts === undefined ? {} : { accounts: options.accounts }),
      ...(options.replica === undefined ? {} : { replica: options.replica }),
      sinks,
      silences,
      notReadyReason: options.notReadyReason,
      ...(options.readyProblems === undefined ? {} : { readyProblems: options.readyProblems }),
      redact,
      now,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(filter === undefined ? {} : { filter }),
    });
  return {
    observer: tracker,
    view,
    setSinks(next, nextSecrets) {
      sinks = next;
      secrets = [...new Set([...secrets, ...nextSecrets.filter((s) => s !== "")])];
      redact = createRedactor(secrets);
    },
    setSilences(next) {
      silences = next;
    },
    handler: (req, res) => {
      const detail = options.detail ?? "full";
      let filter: StatusFilter | undefined;
      try {
        filter = statusFilterOf(req.url, detail);
      } catch (error) {
        const why = error instanceof StatusRequestError ? error.message : "it cannot be read";
        res
          .writeHead(400, {
            "content-type": "text/plain; charset=utf-8",
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
          })
          .end(`bad request: ${why}\n`);
        return;
      }
      let body: string;
      try {
        body = renderStatusPage(view(filter), detail);
      } catch {
        res
          .writeHead(500, {
            "content-type": "text/plain; charset=utf-8",
            "cache-control": "no-store",
          })
          .end("the status page could not be rendered\n");
        return;
      }
      const buffer = Buffer.from(body, "utf8");
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-length": buffer.length,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        // The page has no script: nothing injected could run even if escaping ever failed. Its
        // one form (the filter) is sent to the page itself.
        "content-security-policy":
          "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      });
      res.end(req.method === "HEAD" ? undefined : buffer);
    },
  };
}

/** A request for the page that cannot be answered (a malformed filter): its message, for a 400. */
export class StatusRequestError extends Error {
  override readonly name = "StatusRequestError";
}

/** Longest value quoted back in a 400's message. */
const QUOTED_CHARS = 64;

/**
 * The filter a request's query asks for: `account` (a configured account's name) and `org` (an
 * organisation's id), each at most once; an empty value (the form's "every" choice) filters
 * nothing, and other parameters are ignored. A name or id that is well formed but unknown is
 * not an error: the page shows no project and says why. The summary page has no filter.
 * Throws a `StatusRequestError` saying what is wrong.
 */
export function statusFilterOf(
  url: string | undefined,
  detail: StatusDetail = "full",
): StatusFilter | undefined {
  let query: URLSearchParams;
  try {
    query = new URL(url ?? "/", "http://status.invalid").searchParams;
  } catch {
    throw new StatusRequestError("the address cannot be read");
  }
  const quoted = (value: string) => JSON.stringify(value.slice(0, QUOTED_CHARS));
  const one = (key: string): string | undefined => {
    const values = query.getAll(key).filter((v) => v !== "");
    if (values.length > 1) {
      throw new StatusRequestError(
        `${key} is given ${values.length} times: the page filters by one ${key === "org" ? "organisation" : "account"} at a time`,
      );
    }
    return values[0];
  };
  const account = one("account");
  const orgId = one("org");
  if (account === undefined && orgId === undefined) return undefined;
  if (detail === "summary") {
    throw new StatusRequestError(
      "this page shows counts only (status.page: summary) and has no filter by account or organisation",
    );
  }
  if (account !== undefined && !ACCOUNT_NAME_PATTERN.test(account)) {
    throw new StatusRequestError(
      `account=${quoted(account)} is not an account's name (1 to 64 letters, digits, '_', '.' or '-')`,
    );
  }
  if (orgId !== undefined && !RESOURCE_ID_PATTERN.test(orgId)) {
    throw new StatusRequestError(
      `org=${quoted(orgId)} is not an organisation's id (lowercase letters, digits and '-', as org-cool-dew-12345678)`,
    );
  }
  return { account, orgId };
}

/**
 * The secrets the page must never show: the API key and each sink's secrets (`sinkSecrets`: its
 * URL when that is one, its signing secret, custom header values, routing key).
 */
export function statusPageSecrets(
  apiKeys: readonly string[],
  sinks: readonly ResolvedSink[],
  computes: ResolvedComputes = NO_COMPUTES,
): string[] {
  return [...apiKeys, ...sinks.flatMap(sinkSecrets), ...computeSecrets(computes)];
}

/** What the page shows of the configured sinks: names and kinds, never their URLs. */
export function statusPageSinks(
  sinks: readonly { readonly config: { readonly name: string; readonly kind: string } }[],
): { name: string; kind: string }[] {
  return sinks.map((s) => ({ name: s.config.name, kind: s.config.kind }));
}
