/**
 * The status page at `/`: glue between the shared project views, the `StatusTracker` (which
 * hears what only the page shows) and the pure renderer. Server-rendered HTML, no script,
 * never cached.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRedactor } from "../alerts/sinks/redact.js";
import type { SilenceConfig } from "../config/silences.js";
import {
  computeSecrets,
  NO_COMPUTES,
  sinkSecrets,
  type ResolvedComputes,
  type ResolvedSink,
} from "../config/index.js";
import type { DaemonObserver } from "../sync/index.js";
import { renderStatusPage } from "./render.js";
import { StatusTracker } from "./tracker.js";
import { statusView, type StatusSource, type StatusView, type StatusViewOptions } from "./view.js";
import { systemClock } from "../clock.js";

/** What the page shows, as the view reads it (`StatusViewOptions`), and how much of it. */
export interface StatusPageOptions extends Pick<
  StatusViewOptions,
  "version" | "apiUrl" | "accounts" | "sinks" | "silences" | "notReadyReason" | "now" | "limits"
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
}

/** How much the page shows (`status.page`; `off` serves no page at all). */
export type StatusDetail = "summary" | "full";

export interface StatusPage {
  /** Subscribe it to the daemon (`createDaemon({ observers })`), as the project views are. */
  readonly observer: DaemonObserver;
  /** The current view model. */
  view(): StatusView;
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
  const tracker = new StatusTracker({
    now,
    ...(options.limits?.failuresKept === undefined
      ? {}
      : { failuresKept: options.limits.failuresKept }),
  });
  let secrets = (options.secrets ?? []).filter((s) => s !== "");
  let redact = createRedactor(secrets);
  let sinks = options.sinks;
  let silences = options.silences ?? [];
  const view = (): StatusView =>
    statusView({
      source: options.projects,
      tracker,
      version: options.version,
      apiUrl: options.apiUrl,
      ...(options.accounts === undefined ? {} : { accounts: options.accounts }),
      sinks,
      silences,
      notReadyReason: options.notReadyReason,
      redact,
      now,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
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
      let body: string;
      try {
        body = renderStatusPage(view(), options.detail ?? "full");
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
        // The page has no script: nothing injected could run even if escaping ever failed.
        "content-security-policy":
          "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      });
      res.end(req.method === "HEAD" ? undefined : buffer);
    },
  };
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
