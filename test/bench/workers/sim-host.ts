/**
 * A benchmark worker process that hosts the simulator, so that serving the API costs the
 * exporter's process nothing. The driver reaches the API over loopback HTTP like the exporter
 * does, and sets up data (bulk histories, endpoints, scripted operations) and reads the ground
 * truth through this worker's commands, which are not part of anything measured.
 */
import { isEndStatus } from "../../../src/contract/index.js";
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from "../../../src/simulator/index.js";
import { serve } from "../lib/rpc.js";
import { memorySnapshot } from "../lib/process-stats.js";

let sim: RunningSimulator | undefined;

function running(): RunningSimulator {
  if (sim === undefined) throw new Error("the simulator is not started");
  return sim;
}

export type SimStartArgs = Omit<SimulatorOptions, "startTime"> & { readonly startTimeMs?: number };

export interface ScriptArgs {
  readonly projectId: string;
  readonly action: string;
  readonly steps: readonly { status: string; after_seconds: number; error?: string }[];
  /** Attach the operation to the project's first endpoint. */
  readonly onEndpoint?: boolean;
}

const micros = (iso: string): number => {
  const match = /^(.*?)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (match === null) throw new Error(`not a UTC timestamp: ${iso}`);
  return Date.parse(`${match[1] ?? ""}Z`) * 1000 + Number((match[2] ?? "").padEnd(6, "0"));
};

const handlers = {
  async start(args: SimStartArgs): Promise<{ url: string; apiUrl: string; seed: number }> {
    const { startTimeMs, ...rest } = args;
    sim = await startSimulator({
      ...rest,
      ...(startTimeMs === undefined ? {} : { startTime: new Date(startTimeMs) }),
    });
    return { url: sim.url, apiUrl: sim.apiUrl, seed: sim.seed };
  },

  seedBulk(args: { projects: number; operationsPerProject: number; spanSeconds?: number }): {
    projectIds: string[];
    operations: number;
    ms: number;
  } {
    const started = performance.now();
    const result = running().seedBulk(args);
    return { ...result, ms: performance.now() - started };
  },

  /**
   * Gives each project `endpoints` endpoints in all (the bulk seed's read-write one, plus read
   * replicas on its primary branch).
   */
  addEndpoints(args: { projectIds: readonly string[]; endpoints: number }): { created: number } {
    const plane = running().plane;
    let created = 0;
    for (const id of args.projectIds) {
      const project = plane.world.project(id);
      if (project === undefined) throw new Error(`no project ${id}`);
      const branch = project.branches[0];
      if (branch === undefined) throw new Error(`project ${id} has no branch`);
      for (let n = project.endpoints.length; n < args.endpoints; n++) {
        plane.endpoints.create(id, { endpoint: { branch_id: branch.id, type: "read_only" } });
        created += 1;
      }
    }
    return { created };
  },

  /** Appends scripted operations (see `POST /_sim/operations`); returns their ids. */
  script(args: { operations: readonly ScriptArgs[] }): { ids: string[] } {
    const plane = running().plane;
    const ids: string[] = [];
    for (const op of args.operations) {
      const project = plane.world.project(op.projectId);
      const branch = project?.branches[0];
      if (project === undefined || branch === undefined) throw new Error(`no ${op.projectId}`);
      const endpoint = op.onEndpoint === true ? project.endpoints[0] : undefined;
      ids.push(
        plane.scriptOperation({
          project_id: op.projectId,
          branch_id: branch.id,
          ...(endpoint === undefined ? {} : { endpoint_id: endpoint.id }),
          action: op.action,
          steps: op.steps,
        }).id,
      );
    }
    return { ids };
  },

  advance(args: { seconds: number }): { nowMs: number } {
    running().advance(args.seconds);
    return { nowMs: running().now().getTime() };
  },

  now: () => ({ nowMs: running().now().getTime() }),

  /** The simulated time and the wall time at one instant (a fast real clock maps one to the other). */
  anchor: () => {
    const s = running();
    s.settle();
    return { simMs: s.now().getTime(), wallMs: Date.now() };
  },

  /** The projects the traffic keeps busy, most active first. */
  trafficProjects: () => ({ projectIds: [...running().trafficProjects()] }),

  /**
   * Operations created after `sinceMs` (simulated clock) per project, the availability
   * checks left out: the traffic's shape as it came out.
   */
  operationsSince(args: { sinceMs: number }): Record<string, number> {
    const s = running();
    const out: Record<string, number> = {};
    for (const project of s.plane.world.projects) {
      let n = 0;
      for (const op of s.plane.truth(project.id).operations) {
        if (op.action !== "check_availability" && Date.parse(op.created_at) > args.sinceMs) n += 1;
      }
      out[project.id] = n;
    }
    return out;
  },

  /**
   * The ground truth: end-state arrivals after `sinceMs` (all, when absent), summed over
   * `projectIds` (every project, when absent), and per project when `perProject` is set.
   */
  truth(args: { projectIds?: readonly string[]; sinceMs?: number; perProject?: boolean }): {
    total: number;
    byKey: Record<string, number>;
    byProject: Record<string, Record<string, number>>;
  } {
    const s = running();
    const since = args.sinceMs === undefined ? -Infinity : args.sinceMs * 1000;
    const ids = args.projectIds ?? s.plane.world.projects.map((p) => p.id);
    let total = 0;
    const byKey: Record<string, number> = {};
    const byProject: Record<string, Record<string, number>> = {};
    for (const id of ids) {
      const mine: Record<string, number> = {};
      for (const op of s.plane.truth(id).operations) {
        for (const h of op.history) {
          if (!isEndStatus(h.status) || micros(h.at) <= since) continue;
          const key = `${op.action} ${h.status}`;
          byKey[key] = (byKey[key] ?? 0) + 1;
          mine[key] = (mine[key] ?? 0) + 1;
          total += 1;
        }
      }
      if (args.perProject === true) byProject[id] = mine;
    }
    return { total, byKey, byProject };
  },

  /** When each of these operations first arrived at `status` (epoch ms, simulated clock). */
  arrivalTimes(args: {
    operations: readonly { projectId: string; id: string }[];
    status: string;
  }): Record<string, number | null> {
    const s = running();
    const out: Record<string, number | null> = {};
    const byProject = new Map<string, Set<string>>();
    for (const op of args.operations) {
      const set = byProject.get(op.projectId) ?? new Set<string>();
      set.add(op.id);
      byProject.set(op.projectId, set);
    }
    for (const [projectId, ids] of byProject) {
      for (const op of s.plane.truth(projectId).operations) {
        if (!ids.has(op.id)) continue;
        const h = op.history.find((x) => x.status === args.status);
        out[op.id] = h === undefined ? null : micros(h.at) / 1000;
      }
    }
    return out;
  },

  memory: () => memorySnapshot(),
};

export type SimHost = typeof handlers;

serve(handlers);
