/**
 * Whether an account's base URL is wrong. A project whose log answers 404 may be gone, or the
 * base URL may not be the API's (no `/api/v2`): then every project answers 404. After a 404 the
 * API's root is asked once (`rootAnswersNotFound`, the decision `check-config` and `wait` make),
 * and again only after the API has answered: the other projects' 404s wait for that one answer.
 */
import { rootAnswersNotFound, type ApiClient } from "../api/index.js";
import type { Clock } from "../clock.js";

/** The API answers 404 at an account's root: its base URL is wrong. */
export interface WrongBaseUrl {
  /** Wall-clock time it was found (epoch ms). */
  readonly sinceMs: number;
}

/**
 * What a call says of the base URL: wrong, found by this call's 404 (the one to say so) or known
 * before it; or right again, answered after it was taken as wrong.
 */
export type BaseUrlState = "found_wrong" | "still_wrong" | "right_again";

export interface BaseUrlCheck {
  /**
   * After a 404: asks the API's root, unless it was asked since the API last answered; undefined
   * when the root answers (the 404 is the project's).
   */
  notFound(signal?: AbortSignal): Promise<"found_wrong" | "still_wrong" | undefined>;
  /** The API answered a call: the base URL is right. Returns whether it was taken as wrong. */
  answered(): boolean;
  /** While the base URL is taken as wrong: since when. */
  wrong(): WrongBaseUrl | undefined;
}

export function baseUrlCheck(client: Pick<ApiClient, "listProjects">, clock: Clock): BaseUrlCheck {
  /** The root's answer since the API last answered (true: 404). */
  let asked: Promise<boolean> | undefined;
  let wrong: WrongBaseUrl | undefined;
  /** Counts the answers: a root asked before the latest one says nothing any more. */
  let answers = 0;
  return {
    async notFound(signal) {
      const before = answers;
      const ask = (asked ??= rootAnswersNotFound(client, signal));
      const rootNotFound = await ask;
      if (signal?.aborted === true && asked === ask) asked = undefined;
      if (!rootNotFound || answers !== before) return undefined;
      if (wrong !== undefined) return "still_wrong";
      wrong = { sinceMs: clock.wall() };
      return "found_wrong";
    },
    answered() {
      answers++;
      asked = undefined;
      const was = wrong !== undefined;
      wrong = undefined;
      return was;
    },
    wrong: () => wrong,
  };
}
