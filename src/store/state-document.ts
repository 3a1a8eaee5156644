/**
 * Reading a stored project-state document back: the one check every store makes before it uses
 * what it read (a file's text, a row's document), so that a corrupt, foreign or newer document
 * is refused the same way wherever it is kept, and never half used.
 */
import {
  STATE_FORMAT,
  STATE_VERSION,
  projectStateSchema,
  type ProjectState,
} from "./project-state.js";
import { StateFileError } from "./state-store.js";

/** Where a document was read from, as errors name it. */
export interface StoredDocument {
  /** The file or row, as the error's `file` names it (and its message ends with). */
  readonly location: string;
  /** What the message calls it: `state file`, `the state row`. */
  readonly noun: string;
}

/**
 * Validates the document `text` stored for `projectId`; never returns one it cannot vouch for.
 * Throws `StateFileError`: `corrupt` (not JSON, or not the schema), `foreign` (another format,
 * or another project's), `version` (a format version this build does not read).
 */
export function parseStateDocument(
  text: string,
  projectId: string,
  { location, noun }: StoredDocument,
): ProjectState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new StateFileError(location, "corrupt", `${noun} is not valid JSON`);
  }
  const envelope = json as { format?: unknown; version?: unknown; projectId?: unknown } | null;
  if (typeof envelope !== "object" || envelope === null || envelope.format !== STATE_FORMAT) {
    throw new StateFileError(location, "foreign", `${noun} is not a ${STATE_FORMAT} document`);
  }
  if (envelope.version !== STATE_VERSION) {
    throw new StateFileError(
      location,
      "version",
      `state format version ${String(envelope.version)} is not supported (this build reads version ${STATE_VERSION})`,
    );
  }
  if (envelope.projectId !== projectId) {
    throw new StateFileError(
      location,
      "foreign",
      `${noun} belongs to project ${JSON.stringify(envelope.projectId)}, not ${projectId}`,
    );
  }
  const parsed = projectStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where =
      issue === undefined ? "" : `${issue.path.join(".") || "(root)"}: ${issue.message}`;
    throw new StateFileError(location, "corrupt", `${noun} does not match its format (${where})`);
  }
  return parsed.data;
}
