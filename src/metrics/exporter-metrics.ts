/**
 * The metrics module's entry point, in two phases. `countMetrics` registers the families counted
 * from events and returns the hooks that count into them (the daemon's observer, the API
 * client's events, the notifier's and the lease manager's reports): built before the daemon,
 * whose parts count from their construction. `exposeMetrics` adds the projected families, which
 * read the project views and the daemon's parts at each rendering, and the cached exposition:
 * built once the daemon exists. `createExporterMetrics` does both at once.
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
import { otlpCounters } from "./events/otlp.js";
import type { OtlpObserver } from "../otlp/index.js";
import {
  CachedExposition,
  DEFAULT_TIMING,
  type Exposition,
  type ExpositionTiming,
} from "./rendering/exposition.js";
import { catalogueTexts, registerEventFamilies } from "./rendering/families.js";
import { familyValuesReader, type FamilyValues } from "./rendering/family-values.js";
import { gzipBody } from "./rendering/compressed-body.js";
import { familyNames, processMetricsRegistry } from "./definitions/process.js";
import type { MetricSpec } from "./definitions/family.js";
import type { AccountProbe, ConfigLoadProbe, LeaseProbe } from "./definitions/projection.js";
import { nameFilter, specFilter, type SelectionOptions } from "./definitions/selection.js";
import { registryFamilies, slicedRendering } from "./rendering/sliced-rendering.js";

export interface CountingOptions extends SelectionOptions {
  /** The accounts' names, known before the daemon exists (their discovery failures start at 0). */
  readonly accountNames?: readonly string[];
}

/** The families counted from events, and the hooks that count into them. */
export interface MetricCounts extends Required<DaemonObserver> {
  /** Hooks for the API client's `events` option. */
  readonly apiEvents: ApiClientEvents;
  /** The notifier's reports (alert deliveries). */
  readonly notifierObserver: Required<NotifierObserver>;
  /** The lease manager's reports (claims, releases, losses, fenced commits). */
  readonly leaseObserver: Required<LeaseObserver>;
  /** The OpenTelemetry export's reports (spans sent, given up on; failed exports). */
  readonly otlpObserver: OtlpObserver;
  /** Where the counts are kept, and which families are selected (read by `exposeMetrics`). */
  readonly counted: CountedFamilies;
}

/** What `exposeMetrics` renders of the counts. */
export interface CountedFamilies {
  readonly registry: Registry;
  readonly processRegistry: Registry;
  readonly selected: (spec: MetricSpec) => boolean;
  /** Tells `listener` of every count from now on (the exposition is rebuilt after changes). */
  onChange(listener: () => void): void;
}

export interface ExpositionOptions {
  /**
   * What is known of each watched project (the shared `ProjectViews`, subscribed to the daemon
   * before these metrics): the projected families are computed from it.
   */
  readonly projects: Iterable<ProjectView>;
  /** The exporter's version, for `pgcp_build_info`. */
  readonly version: string;
  /** The git commit it was built from, when known, for `pgcp_build_info`. */
  readonly revision?: string | undefined;
  /** The accounts' schedulers and limiters, read at each rendering. */
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

export type ExporterMetricsOptions = CountingOptions & ExpositionOptions;

export interface ExporterMetrics extends MetricCounts, Exposition {
  /** Rebuilds the rendering now; resolves once `current()` returns it. */
  refresh(): Promise<void>;
  /**
   * The families `/metrics` serves and their series, read now as numbers (the OTLP push reads
   * them): the same selection and values as a rendering built at this moment.
   */
  families(): Promise<FamilyValues[]>;
  /**
   * Stops the rebuild timers. prom-client's process collectors (GC and event-loop observers)
   * stay: it offers no way to stop them, and a process has one instance of this module.
   */
  close(): void;
}

/** Registers the selected families counted from events; throws on an unknown name. */
export function countMetrics(options: CountingOptions): MetricCounts {
  const processRegistry = processMetricsRegistry();
  const processNames = familyNames(processRegistry);
  const byName = nameFilter([...CATALOGUE.map((spec) => spec.name), ...processNames], options);
  for (const name of processNames) if (!byName(name)) processRegistry.removeSingleMetric(name);
  const registry = new Registry();
  const selected = specFilter(byName, options);
  const events = registerEventFamilies(registry, selected);
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const listener of listeners) listener();
  };
  return {
    ...daemonObserver(events, changed, options.accountNames),
    apiEvents: apiEventCounters(events, changed),
    notifierObserver: notifierCounters(events, changed),
    leaseObserver: leaseCounters(events, changed),
    otlpObserver: otlpCounters(events, changed),
    counted: {
      registry,
      processRegistry,
      selected,
      onChange: (listener) => {
        listeners.push(listener);
      },
    },
  };
}

/** The counts with the projected families, rendered into the cached exposition. */
export function exposeMetrics(counts: MetricCounts, options: ExpositionOptions): ExporterMetrics {
  const { registry, processRegistry, selected } = counts.counted;
  const input = {
    projects: options.projects,
    runtime: {
      version: options.version,
      revision: options.revision,
      accounts: options.accounts,
      leases: options.leases,
      configLoads: options.configLoads,
    },
  };
  const texts = catalogueTexts(registry, selected, input);
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
  counts.counted.onChange(() => {
    exposition.invalidate();
  });
  return {
    ...counts,
    current: () => exposition.current(),
    lend: () => exposition.lend(),
    refresh: () => exposition.refresh(),
    families: familyValuesReader({ registry, processRegistry, selected, input }),
    close: () => {
      exposition.close();
    },
  };
}

/** Both phases at once, for metrics that read no daemon built in between. */
export function createExporterMetrics(options: ExporterMetricsOptions): ExporterMetrics {
  return exposeMetrics(countMetrics(options), options);
}

function warn(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : String(error), "MetricsRenderingWarning");
}
