/**
 * Just enough Markdown for the runbooks' tests: a document's headings with the anchors GitHub
 * gives them, its sections, its fenced code blocks and its links.
 */

export interface Heading {
  readonly level: number;
  readonly text: string;
  /** GitHub's anchor: lower case, punctuation removed, spaces to hyphens, `-1`… on repeats. */
  readonly anchor: string;
  /** The text from the heading to the next heading of its level or above. */
  readonly body: string;
}

/** GitHub's anchor for a heading's text, before repeats are numbered. */
export function slug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The document's lines, with those inside fenced code blocks blanked. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line;
  });
}

export function headings(markdown: string): Heading[] {
  const lines = markdown.split("\n");
  const prose = proseLines(markdown);
  const found: { level: number; text: string; line: number }[] = [];
  prose.forEach((line, i) => {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (match !== null) found.push({ level: match[1]!.length, text: match[2]!, line: i });
  });
  const seen = new Map<string, number>();
  return found.map((h, i) => {
    const base = slug(h.text.replace(/`/g, ""));
    const repeats = seen.get(base) ?? 0;
    seen.set(base, repeats + 1);
    const end = found.slice(i + 1).find((next) => next.level <= h.level)?.line ?? lines.length;
    return {
      level: h.level,
      text: h.text,
      anchor: repeats === 0 ? base : `${base}-${repeats}`,
      body: lines.slice(h.line + 1, end).join("\n"),
    };
  });
}

/** The contents of the code blocks fenced as `language`. */
export function codeBlocks(markdown: string, language: string): string[] {
  const blocks: string[] = [];
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, "gm");
  for (const match of markdown.matchAll(fence)) blocks.push(match[1]!);
  return blocks;
}

/** The targets of the document's inline links `[text](target)`, outside code blocks. */
export function linkTargets(markdown: string): string[] {
  const prose = proseLines(markdown).join("\n");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}
