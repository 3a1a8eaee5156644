/**
 * Alert outbox families, projected from each project's committed outbox, firing set and dead
 * letters: what is pending per sink, since when, what fires, and what was given up on.
 */
import { PAUSE, type Projections } from "./projected-family.js";
import { committed } from "../sync/index.js";

export const alertProjections = {
  *pgcp_alerts_pending({ projects }) {
    const pending = new Map<string, number>();
    for (const { state } of committed(projects)) {
      yield PAUSE;
      for (const entry of state.outbox) {
        for (const sink of entry.pending) pending.set(sink, (pending.get(sink) ?? 0) + 1);
      }
    }
    for (const [sink, value] of pending) yield { labels: { sink }, value };
  },

  *pgcp_alerts_oldest_pending_timestamp_seconds({ projects }) {
    const oldest = new Map<string, number>();
    for (const { state } of committed(projects)) {
      yield PAUSE;
      for (const entry of state.outbox) {
        for (const sink of entry.pending) {
          oldest.set(sink, Math.min(oldest.get(sink) ?? Infinity, entry.createdAtMs));
        }
      }
    }
    for (const [sink, ms] of oldest) yield { labels: { sink }, value: ms / 1000 };
  },

  *pgcp_alerts_firing({ projects }) {
    const firing = new Map<string, number>();
    for (const { state } of committed(projects)) {
      yield PAUSE;
      for (const f of state.firing ?? []) {
        if (f.endedAtMs === undefined) firing.set(f.sink, (firing.get(f.sink) ?? 0) + 1);
      }
    }
    for (const [sink, value] of firing) yield { labels: { sink }, value };
  },

  *pgcp_alerts_dead_letters({ projects }) {
    const dead = new Map<string, number>();
    for (const { state } of committed(projects)) {
      yield PAUSE;
      for (const letter of state.deadLetters)
        dead.set(letter.sink, (dead.get(letter.sink) ?? 0) + 1);
    }
    for (const [sink, value] of dead) yield { labels: { sink }, value };
  },
} satisfies Partial<Projections>;
