import type { OperationRunner, OperationSpec } from "./operation-runner.js";
import type { ProjectState } from "./state.js";

interface Link {
  index: number;
  readonly spec: OperationSpec;
}

/**
 * Operations that must run one after another on the same endpoint (seed 3.1: an endpoint's
 * start_compute is `scheduling` while the branch creation runs). The first runs at once; each
 * later one waits in `scheduling` until its predecessor ends. When one ends in anything but
 * `finished` or `skipped`, the ones still waiting are `skipped`: they are bypassed.
 */
export class OperationChain {
  private current: Link | undefined;
  private readonly waiting: Link[] = [];

  constructor(
    private readonly runner: OperationRunner,
    private readonly project: ProjectState,
    private readonly onIdle: () => void,
  ) {}

  /** Adds an operation; returns its log index. */
  enqueue(spec: OperationSpec): number {
    if (this.current === undefined) {
      // `current` is set before starting: a plan may end synchronously inside `start`.
      const link: Link = { index: -1, spec };
      this.current = link;
      link.index = this.runner.start(this.project, this.linked(link));
      return link.index;
    }
    const link: Link = { index: this.runner.schedule(this.project, spec), spec };
    this.waiting.push(link);
    return link.index;
  }

  /** Actions of the operations not yet ended, the running one first. */
  pendingActions(): string[] {
    const links = this.current === undefined ? this.waiting : [this.current, ...this.waiting];
    return links.map((l) => l.spec.action);
  }

  /** The spec with an end hook that hands over to the next waiting operation. */
  private linked(link: Link): OperationSpec {
    return {
      ...link.spec,
      onEnd: (status) => {
        link.spec.onEnd?.(status);
        if (this.current === link) this.current = undefined;
        this.advance(status);
      },
    };
  }

  private advance(endedWith: string): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.onIdle();
      return;
    }
    if (endedWith === "finished" || endedWith === "skipped") {
      this.current = next;
      this.runner.run(this.project, next.index, this.linked(next));
      return;
    }
    for (const link of [next, ...this.waiting.splice(0)]) {
      this.runner.end(this.project, link.index, "skipped");
      link.spec.onEnd?.("skipped");
    }
    this.onIdle();
  }
}
