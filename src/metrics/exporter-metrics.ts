/**
 * The metrics module's entry point: builds the registry from the catalogue and the options,
 * and returns the daemon observer, the API client hooks and the cached exposition, all wired.
 */
import { Registry } from "prom-client";
import type { ApiClientEvents } from "../api/index.js";
import type { DaemonObserver, ProjectView } from "../sync/index.js";
import type { NotifierObserver } from "../alerts/pipeline/notifier.js";
import type { LeaseObserver } from "../leases/index.js";
import { apiEventCounters } from "./events/api.js";
import { notifierCounters } from "./events/notifier.js";
import { CATALOGUE } from "./definitions/catalogue.js";
import { daemonObserver } from "./events/daemon.js";
import { leaseCounters } from "./events/leases.js";
import {
  CachedExposition,
  DEFAULT_TIMING,
  type Exposition,
  type ExpositionTiming,
} from "./rendering/exposition.js";
import { registerCatalogue } from "./rendering/families.js";
import { gzipBody } from "./rendering/compressed-body.js";
import { familyNames, processMetricsRegistry } from "./definitions/process.js";
import type { AccountProbe, ConfigLoadProbe, LeaseProbe } from "./definitions/projection.js";
import { nameFilter, specFilter, type SelectionOptions } from "./definitions/selection.js";
import { registryFamilies, slicedRendering } from "./rendering/sliced-rendering.js";

export interface ExporterMetricsOptions extends SelectionOptions {
  /**
   * What is known of each watched project (the shared `ProjectViews`, subscribed to the daemon
   * before these metrics): the projected families are computed from it.
   */
  readonly projects: Iterable<ProjectView>;
  /** The exporter's version, for `pgcp_build_info`. */
  readonly version: string;
  /** The git commit it was built from, when known, for `pgcp_build_info`. */
  readonly revision?: string | undefined;
  /** The accounts' names, known before the daemon exists (their discovery failures start at 0). */
  readonly accountNames?: readonly string[];
  /** The accounts' schedulers and limiters, read at each rendering (the daemon's registry). */
  readonly accounts?: () => readonly AccountProbe[] | undefined;
  /** The lease manager, read at each rendering (undefined: the file store, no leases). */
  readonly leases?: () => LeaseProbe | undefined;
  /** How the configuration was last (re)loaded. */
  readonly configLoads?: () => ConfigLoadProbe;
  /**
   * Hears renderings that fail (a bug); the previous rendering keeps being served. Without it,
   * the failure becomes a process warning.
   */
  readonly onError?: (error: unknown) => void;
  /** When the cached rendering is rebuilt (tests shorten it). */
  readonly timing?: ExpositionTiming;
}

export interface ExporterMetrics extends Required<DaemonObserver>, Exposition {
  /** Hooks for the API client's `events` option. */
  readonly apiEvents: ApiClientEvents;
  /** The notifier's reports (alert deliveries). */
  readonly notifierObserver: Required<NotifierObserver>;
  /** The lease manager's reports (claims, releases, losses, fenced commits). */
  readonly leaseObserver: Required<LeaseObserver>;
  /** Rebuilds the rendering now; resolves once `current()` returns it. */
  refresh(): Promise<void>;
  /**
   * Stops the rebuild timers. prom-client's process collectors (GC and event-loop observers)
   * stay: it offers no way to stop them, and a process has one instance of this module.
   */
  close(): void;
}

export function createExporterMetrics(options: ExporterMetricsOptions): ExporterMetrics {
  const processRegistry = processMetricsRegistry();
  const processNames = familyNames(processRegistry);
  const selected = nameFilter([...CATALOGUE.map((spec) => spec.name), ...processNames], options);
  for (const name of processNames) if (!selected(name)) processRegistry.removeSingleMetric(name);

  const registry = new Registry();
  const { events, texts } = registerCatalogue(registry, specFilter(selected, options), {
    projects: options.projects,
    runtime: {
      version: options.version,
      revision: options.revision,
      accounts: options.accounts,
      leases: options.leases,
      configLoads: options.configLoads,
    },
  });
  // The exporter's own families first, then the process's.
  const rendering = slicedRendering([...texts, ...registryFamilies(processRegistry)]);
  const exposition = new CachedExposition(
    () => rendering.render(),
    registry.contentType,
    options.timing ?? DEFAULT_TIMING,
    options.onError ?? warn,
    gzipBody,
    (body) => {
      rendering.recycle(body);
    },
  );
  const changed = () => {
    exposition.invalidate();
  };
  return {
    ...daemonObserver(events, changed, options.accountNames),
    apiEvents: apiEventCounters(events, changed),
    notifierObserver: notifierCounters(events, changed),
    leaseObserver: leaseCounters(events, changed),
    current: () => exposition.current(),
    lend: () => exposition.lend(),
    refresh: () => exposition.refresh(),
    close: () => {
      exposition.close();
    },
  };
}

function warn(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : String(error), "MetricsRenderingWarning");
}
