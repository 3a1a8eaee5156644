/**
 * Free text from outside (error messages, reasons, names) as the page shows it: through the
 * redactor that knows the secrets, control characters replaced, cut to the longest shown.
 */

/** What every text from outside goes through before the view holds it. */
export type Clean = (text: string) => string;

/** Redacts a text, replaces its control characters and truncates it to `max` characters. */
export function cleaner(redact: (text: string) => string, max: number): Clean {
  return (text) => truncate(stripControls(redact(text)), max);
}

/** A name from outside, cleaned; undefined while unknown (or empty). */
export function nameOrUndefined(name: string | undefined, clean: Clean): string | undefined {
  return name === undefined || name === "" ? undefined : clean(name);
}

/** The message of an error, whatever was thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : error.message;
  return String(error);
}

/** Control characters (other than tab and newline) would garble the page: replaced. */
function stripControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "\ufffd");
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, Math.max(0, max - 1)) + "…";
}
